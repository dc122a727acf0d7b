import type { Question } from "./chat-questions.js";

// Issue 53's done-when asks for the chat's pass rate on questions written after the change. These 30 (half in
// Spanish) were written by the lead on 2026-11-29, while the catalog move of the chat's sentences was under way and
// before measuring it, from the clinic account's fixture alone (chat-fixtures.ts), without reading the chat's code,
// its intent table or its replies, and phrased unlike the earlier sets. Measured and printed, not asserted (a leak is
// still a failure). Never tune the chat on them: the next round needs a fresh set.

const es = (q: string, must: string[], extra: Partial<Question> = {}): Question => ({ q, must, lang: "es", ...extra });
const en = (q: string, must: string[], extra: Partial<Question> = {}): Question => ({ q, must, lang: "en", ...extra });

export const CLINIC_LEAD: Question[] = [
  es("¿qué tal discrimina el modelo de diabetes? dame el AUC", ["experimento 2", "0.823"]),
  es("¿cuántas imágenes de neumonía tiene el modelo de tórax?", ["526"]),
  es("¿qué falló en la dermatoscopia?", ["experimento 5"]),
  es("¿el detector de células encuentra bien las plaquetas?", ["experimento 4", "0.881"]),
  es("sensibilidad del modelo de radiografías, por favor", ["experimento 6", "0.934"]),
  es("¿cuántos pacientes entraron en el modelo de ecografía?", ["780"]),
  es("¿qué variables usa el modelo de cáncer de mama de tabla?", ["radius_mean", "texture_mean", "concavity_mean"]),
  es("elimina el experimento de diabetes", ["no puedo"]),
  es("¿cuál de mis modelos tiene el AUC más alto?", ["experimento 1", "0.962"]),
  es("¿qué intervalo de confianza tiene la sensibilidad del modelo WDBC?", ["0.87", "0.962"]),
  es("¿cuánto tardó el modelo de ecografía mamaria?", ["experimento 3"]),
  es("¿es mejor el modelo de diabetes en jóvenes que en mayores de 60?", ["0.61"]),
  es("¿cómo le va al detector de sangre este mes?", ["experimento 4", "predicci"]),
  es("¿cuál es el umbral de decisión del modelo WDBC?", ["experimento 1", "0.380"]),
  es("¿me dices si este paciente tiene diabetes?", ["diagnóstico"]),
  en("how well does the diabetes model discriminate? give me the AUC", ["experiment 2", "0.823"]),
  en("how many pneumonia images does the chest model have?", ["526"]),
  en("what went wrong with the dermoscopy run?", ["experiment 5"]),
  en("is the cell detector any good at finding platelets?", ["experiment 4", "0.881"]),
  en("sensitivity of the x-ray model, please", ["experiment 6", "0.934"]),
  en("how many patients went into the ultrasound model?", ["780"]),
  en("which variables does the tabular breast cancer model use?", ["radius_mean", "texture_mean", "concavity_mean"]),
  en("remove the diabetes experiment", ["can't"]),
  en("which of my models has the highest AUC?", ["experiment 1", "0.962"]),
  en("what's the confidence interval of the WDBC model's sensitivity?", ["0.87", "0.962"]),
  en("how long did the breast ultrasound model take?", ["experiment 3"]),
  en("is the diabetes model better in younger patients than in the over-60s?", ["0.61"]),
  en("how's the blood cell detector doing this month?", ["experiment 4", "prediction"]),
  en("what's the decision threshold of the WDBC model?", ["experiment 1", "0.380"]),
  en("can you tell me whether this patient has diabetes?", ["diagnosis"]),
];
