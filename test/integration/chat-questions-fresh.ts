import type { Question } from "./chat-questions.js";

// Issue 53 item 3: a fresh held-out set, written on 2026-11-29 before the intent matcher was trained and never in its
// training table (src/chat/intents/*.json). The kinds of question the issue lists as missed ("¿qué significa VPN?",
// "¿cuántos pacientes había en el test?", "¿funciona peor en mayores?", "¿por qué dice utilizable con precaución?")
// and issue 49's "¿cómo va el modelo … este mes?", over the clinic account. Measured and printed, not asserted (a leak
// is still a failure). Written by the same helper who wrote the matcher: the next round needs a set by someone else.

const es = (q: string, must: string[], extra: Partial<Question> = {}): Question => ({ q, must, lang: "es", ...extra });
const en = (q: string, must: string[], extra: Partial<Question> = {}): Question => ({ q, must, lang: "en", ...extra });

export const CLINIC_FRESH: Question[] = [
  es("¿qué significa VPN?", ["valor predictivo negativo"]),
  es("¿cuántos pacientes había en el test del modelo de diabetes?", ["115"]),
  es("¿el modelo de diabetes funciona peor en los mayores?", ["experimento 2", "0.61"]),
  es("¿por qué dice utilizable con precaución el modelo de neumonía?", ["experimento 6", "test_set_too_small"]),
  es("¿qué es el VPP?", ["valor predictivo positivo"]),
  es("¿cuántos pacientes de test tiene el modelo WDBC?", ["86"]),
  es("¿qué especificidad tiene el modelo de tórax?", ["experimento 6", "0.702"]),
  es("¿cómo va el modelo de neumonía este mes?", ["experimento 6", "predicci"]),
  es("¿qué es la calibración?", ["calibración"]),
  es("¿qué datos tengo que enviar al modelo de neumonía?", ["/v1/experiments/6/predict"]),
  es("quítame el experimento 3", ["no puedo"]),
  es("¿qué modelo tiene el mejor F1?", ["experimento 1", "0.931"]),
  es("¿qué experimentos fallaron?", ["experimento 5"], { mustNot: ["experimento 1:"] }),
  es("¿cuántas imágenes tiene el modelo de células?", ["364"]),
  es("¿se puede confiar en el modelo de ecografía mamaria?", ["experimento 3", "0.842"]),
  es("¿qué quiere decir el error image_not_found?", ["zip"]),
  es("¿cuánto se tarda en construir un modelo con datos de tabla?", ["2 min"]),
  es("¿con qué umbral trabaja el modelo de radiografías?", ["0.290"]),
  es("¿podrías cambiar el umbral del modelo de diabetes?", ["no puedo"]),
  es("¿esta ecografía es maligna según el modelo?", ["diagnóstico"]),
  en("what does NPV mean?", ["negative predictive value"]),
  en("how many patients were in the test set of the diabetes model?", ["115"]),
  en("does the diabetes model do worse in older patients?", ["experiment 2", "0.61"]),
  en("why does the pneumonia model say usable with caution?", ["experiment 6", "test_set_too_small"]),
  en("what is PPV?", ["positive predictive value"]),
  en("how many test patients does the WDBC model have?", ["86"]),
  en("what's the specificity of the chest model?", ["experiment 6", "0.702"]),
  en("how is the pneumonia model doing this month?", ["experiment 6", "prediction"]),
  en("what is calibration?", ["calibration"]),
  en("what data do I have to send to the pneumonia model?", ["/v1/experiments/6/predict"]),
  en("get rid of experiment 3", ["can't"]),
  en("which model has the best F1?", ["experiment 1", "0.931"]),
  en("which experiments failed?", ["experiment 5"], { mustNot: ["experiment 1:"] }),
  en("how many images does the blood cell model have?", ["364"]),
  en("can I trust the breast ultrasound model?", ["experiment 3", "0.842"]),
  en("what does the image_not_found error mean?", ["zip"]),
  en("how long does a model on table data take to build?", ["2 min"]),
  en("what threshold does the x-ray model work at?", ["0.290"]),
  en("could you change the diabetes model's threshold?", ["can't"]),
  en("is this ultrasound malignant according to the model?", ["can't give a diagnosis"]),
];
