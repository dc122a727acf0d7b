import type { Glossary } from "../glossary.js";
import type { Lang } from "../language.js";

// What metrics and the commonest problem codes mean, in Spanish. The English meanings come from the documentation's
// tables (glossary.ts) and stay the source of truth; these say the same in fewer words. A code without a Spanish
// entry is explained with the documentation's English text, marked as such.

export const METRIC_MEANINGS_ES: Record<string, string> = {
  auc: "área bajo la curva ROC: la probabilidad de que un caso positivo al azar puntúe más alto que uno negativo al azar (0.5 = azar, 1 = perfecto); no depende del umbral",
  f_macro:
    "el F1 (media armónica de precisión y recall) de cada clase, promediado entre clases; equilibra casos perdidos y falsas alarmas con los umbrales elegidos",
  precision:
    "de los casos que el modelo llama positivos para una clase, la proporción que de verdad lo son (valor predictivo positivo), promediada entre clases",
  recall:
    "de los casos que de verdad pertenecen a una clase, la proporción que el modelo encuentra, promediada entre clases (la sensibilidad media)",
  accuracy: "la proporción de casos con la clase predicha correcta; engaña cuando las clases están desequilibradas",
  ece: "error de calibración esperado: la diferencia media entre la confianza del modelo y lo a menudo que acierta (0 = puntuaciones que son probabilidades honestas)",
  mae: "regresión: error absoluto medio, en la unidad de la etiqueta",
  rmse: "regresión: raíz del error cuadrático medio, en la unidad de la etiqueta; castiga más los errores grandes",
  r2: "regresión: la proporción de la varianza de la etiqueta que explica el modelo (1 = perfecto, 0 = no mejor que la media)",
  map50: "detección (mAP): precisión media, contando una caja como encontrada cuando se solapa con la verdadera con IoU ≥ 0.5",
  map50_95: "detección (mAP): precisión media promediada entre IoU 0.5 y 0.95 (más exigente con la posición de las cajas)",
  sensitivity:
    "de los pacientes que tienen la clase positiva, la proporción que el modelo llama positivos (tasa de verdaderos positivos): cuántos casos encuentra",
  specificity:
    "de los pacientes que no tienen la clase positiva, la proporción que el modelo llama negativos: a cuántos sanos deja tranquilos",
  ppv: "valor predictivo positivo: de los pacientes que el modelo llama positivos, la proporción que lo son; depende de la prevalencia",
  npv: "valor predictivo negativo: de los pacientes que el modelo llama negativos, la proporción que no tienen la clase; depende de la prevalencia",
  prevalence: "la proporción de pacientes de test con la clase positiva; VPP y VPN valen solo donde la clase es así de frecuente",
  calibration_slope: "solo dos clases: si la dispersión de los riesgos se ajusta a la realidad; 1 es lo ideal",
  calibration_intercept: "solo dos clases: si el riesgo medio es correcto; 0 es lo ideal",
};

const CODE_MEANINGS_ES: Record<string, string> = {
  image_not_found: "una imagen del CSV no está en el zip (revise mayúsculas, carpeta y extensión)",
  image_path_missing: "una fila sin ruta de imagen",
  image_path_character: "una ruta con un espacio o un carácter especial; renombre el archivo (p. ej. con `_`)",
  image_unreadable: "una imagen que no se puede leer",
  class_too_small: "una clase con menos de 3 pacientes (hace falta uno en entrenamiento, validación y test)",
  too_few_classes: "menos de 2 clases en la etiqueta",
  csv_row_length: "una fila con más o menos campos que la cabecera: sus valores no se pueden asignar a columnas",
  csv_missing: "no hay ningún CSV en el zip",
  column_missing: "una columna pedida no está en la cabecera",
  missing_value: "una celda vacía en una columna usada: rellénela, o escriba NA donde el valor se desconoce",
  patient_id_missing: "una fila sin id de paciente",
  zip_not_found: "no hay ningún archivo en `zip_gcloud`",
  label_not_numeric: "una etiqueta de regresión que no es un número",
  image_unreferenced: "imágenes del zip que no están en el CSV (no se usan)",
  patient_mixed_labels: "las filas de un paciente tienen etiquetas distintas",
  label_missing: "una fila con la etiqueta vacía se deja fuera",
  duplicate_row: "una fila repetida se deja fuera",
  small_test_part: "el test tiene muy pocos pacientes de una clase: sus cifras se mueven mucho con un paciente",
  rate_limit_exceeded: "demasiadas peticiones por minuto (HTTP 429); espere lo que indica Retry-After",
  missing_api_key: "falta la cabecera Authorization: Bearer <clave> (HTTP 401)",
  invalid_api_key: "la clave de API no existe (HTTP 401)",
};

/** What a problem or error code means, in the reply's language; undefined when the documentation does not list it. */
export function codeMeaning(code: string, glossary: Glossary | undefined, lang: Lang): string | undefined {
  if (lang === "es" && CODE_MEANINGS_ES[code]) return CODE_MEANINGS_ES[code];
  const english = glossary?.codes.get(code)?.meaning;
  if (!english) return undefined;
  return lang === "es" ? `según la documentación (en inglés): "${english}"` : english;
}
