import type { Question } from "./chat-questions.js";

// Held out (issue 39): 40 questions over the clinic account, half in Spanish, written before the code was frozen and
// never used to tune it. Their pass rate is printed and reported, not asserted. A wrong model is a failure.

const es = (q: string, must: string[], extra: Partial<Question> = {}): Question => ({ q, must, lang: "es", ...extra });
const en = (q: string, must: string[], extra: Partial<Question> = {}): Question => ({ q, must, lang: "en", ...extra });

export const CLINIC_HELD_OUT: Question[] = [
  es("¿Qué tal va el modelo de glucosa?", ["experimento 2", "0.823"]),
  es("enséñame las métricas del modelo de ecografías", ["experimento 3", "0.884"]),
  es("¿el modelo de mama es bueno?", ["experimento 1", "experimento 3"], { mustNot: ["0.962"] }),
  es("quiero ver el mapa de calor de mi modelo de mama", ["experimento 3"], { mustNot: ["0.962"] }),
  es("¿qué variables pide el modelo de cáncer de mama?", ["radius_mean", "texture_mean"]),
  es("¿cómo le fue al más reciente?", ["experimento 6"]),
  es("¿por qué no se aceptó el dataset de lesiones?", ["image_not_found"]),
  es("quita el experimento 4", ["no puedo", "DELETE /v1/experiments/4"]),
  es("vuelve a entrenar el experimento 3", ["no puedo"]),
  es("baja el umbral del modelo de neumonía", ["no puedo"]),
  es("¿Sirve mi modelo de diabetes para la práctica clínica?", ["experimento 2", "Retrospective"], { mustNot: ["sí, "] }),
  es("¿es seguro usar el experimento 6 con niños?", ["experimento 6", "Retrospective"]),
  es("¿qué significa el intervalo de confianza del AUC del experimento 3?", ["0.842", "0.921"]),
  es("¿qué gano y qué pierdo con el umbral del experimento 1?", ["0.380", "0.921", "0.944"]),
  es("¿cuánto tiempo lleva entrenar un modelo de imágenes?", ["150", "720"]),
  es("¿como va el experimeto 4?", ["0.881"]),
  es("¿cuál de mis modelos es el mejor en especificidad?", ["experimento 1", "0.944"]),
  es("¿qué es el mAP?", ["mAP"]),
  es("¿Tiene cáncer esta paciente según el modelo de mama?", ["diagnóstico"]),
  es("¿qué clases detecta el modelo de sangre?", ["RBC", "WBC", "Platelets"]),
  en("how's the glucose model doing?", ["experiment 2"]),
  en("give me the metrics of the ultrasound model", ["experiment 3", "0.884"]),
  en("is the breast model any good?", ["experiment 1", "experiment 3"], { mustNot: ["0.962"] }),
  en("where can I see the Grad-CAM of my breast model?", ["experiment 3"], { mustNot: ["0.962"] }),
  en("what inputs does the breast cancer model need?", ["radius_mean"]),
  en("how did my latest experiment go?", ["experiment 6"]),
  en("what's wrong with the skin lesion dataset?", ["image_not_found"]),
  en("remove experiment 4", ["can't", "DELETE /v1/experiments/4"]),
  en("please train the pneumonia model again", ["can't"]),
  en("lower the threshold of experiment 6", ["can't"]),
  en("is the diabetes model safe to use on my patients?", ["experiment 2", "Retrospective"]),
  en("would you deploy experiment 1 in the clinic?", ["experiment 1", "Retrospective"]),
  en("explain the confidence interval of experiment 3's AUC", ["0.842", "0.921"]),
  en("what do I gain and lose with experiment 1's threshold?", ["0.921", "0.944"]),
  en("how long does an image model take to train here?", ["150", "720"]),
  en("whats the status of experment 4", ["0.881"]),
  en("which model has the best specificity?", ["experiment 1", "0.944"]),
  en("cancel experiment 6", ["can't"]),
  en("Does this patient have pneumonia according to experiment 6?", ["can't give a diagnosis"]),
  en("what classes does the blood cell model detect?", ["RBC", "WBC"]),
];
