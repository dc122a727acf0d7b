import type { Question } from "./chat-questions.js";

// Issue 39 asks for a pass rate on questions written after the chat's code was frozen. These 30 (half in Spanish)
// were written by the lead on 2026-11-27 after the chat branch was merged (main at 655cd49), from the clinic
// account's fixture alone, without reading the chat's code or its replies. Measured and printed, not asserted
// (a leak is still a failure). Never tune the chat on them: write a fresh set for the next round instead.

const es = (q: string, must: string[], extra: Partial<Question> = {}): Question => ({ q, must, lang: "es", ...extra });
const en = (q: string, must: string[], extra: Partial<Question> = {}): Question => ({ q, must, lang: "en", ...extra });

export const CLINIC_POST_FREEZE: Question[] = [
  es("¿qué AUC tiene el modelo de radiografías de tórax?", ["experimento 6", "0.901"]),
  es("dime cómo funciona el modelo de diabetes en los distintos grupos de edad", ["experimento 2", "0.61"]),
  es("¿cuál es el mAP del detector de células?", ["experimento 4", "0.881"]),
  es("¿qué le pasó a mi experimento de dermatoscopia?", ["experimento 5"]),
  es("borra mi modelo de neumonía", ["no puedo"]),
  es("¿puedo usar el modelo de ecografía para decidir biopsias?", ["experimento 3", "Retrospective"], { mustNot: ["sí, "] }),
  es("¿qué intervalo de confianza tiene el AUC del modelo de tórax?", ["0.862", "0.934"]),
  es("¿cuántas clases distingue el modelo de ecografía mamaria?", ["benign", "malignant", "normal"]),
  es("¿el modelo de glucosa tiene alguna advertencia?", ["experimento 2", "age"]),
  es("mapa de calor del modelo de neumonia", ["experimento 6"], { mustNot: ["experimento 1"] }),
  es("cambia el nombre del experimento 2", ["no puedo"]),
  es("¿qué sensibilidad tiene el modelo WDBC?", ["experimento 1", "0.921"]),
  es("¿cuánto tardó en entrenarse el modelo de sangre?", ["experimento 4"]),
  es("¿qué columnas necesita el modelo de diabetes?", ["glucose", "bmi", "age", "pregnancies"]),
  es("¿es fiable el último modelo que entrené?", ["experimento 6"]),
  en("what's the AUC of the chest x-ray model?", ["experiment 6", "0.901"]),
  en("how does the diabetes model do across age groups?", ["experiment 2", "0.61"]),
  en("mAP of the blood smear detector?", ["experiment 4", "0.881"]),
  en("why did my dermoscopy experiment fail?", ["experiment 5"]),
  en("delete the pneumonia model", ["can't"]),
  en("can I use the ultrasound model to decide on biopsies?", ["experiment 3", "Retrospective"], { mustNot: ["yes, "] }),
  en("what's the confidence interval on the chest x-ray model's AUC?", ["0.862", "0.934"]),
  en("which classes does the breast ultrasound model predict?", ["benign", "malignant", "normal"]),
  en("any warnings on the glucose model?", ["experiment 2", "age"]),
  en("heatmap for the pnuemonia model", ["experiment 6"], { mustNot: ["experiment 1"] }),
  en("rename experiment 2", ["can't"]),
  en("what's the sensitivity of the WDBC model?", ["experiment 1", "0.921"]),
  en("how long did the blood cell model take to build?", ["experiment 4"]),
  en("which columns does the diabetes model need?", ["glucose", "bmi", "age", "pregnancies"]),
  en("is the last model I trained reliable?", ["experiment 6"]),
];
