// A message as the builtin's patterns read it (issue 39): misspellings corrected against Builder's vocabulary and the
// user's own names, then Spanish words and phrases put into the English the patterns were written in. The reply's
// language is decided separately (language.ts) from the message as written; this text is only read, never shown.

/** Lower case, no accents: "Último" and "ultimo" meet. Underscores, digits and punctuation stay. */
export const unaccent = (text: string) =>
  text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();

// The words the patterns and the experiment resolver look for, in both languages: what a misspelling is corrected to.
const KEYWORDS = (
  "experiment experiments model models threshold thresholds sensitivity specificity precision recall accuracy metrics " +
  "interval confidence refused rejected failed dataset predict prediction columns inputs delete remove retrain cancel " +
  "rename change clinic clinical patients training status classes compare best list upload diagnosis ultrasound " +
  "pneumonia diabetes breast cancer dermoscopy tabular image images detection calibration operating " +
  "experimento experimentos modelo modelos umbral umbrales sensibilidad especificidad metricas intervalo confianza " +
  "rechazado rechazada rechazaron rechazo fallo columnas variables entradas borrar elimina eliminar reentrena reentrenar " +
  "entrenar entrenamiento cancela cancelar consulta clinica pacientes estado clases compara mejor lista subir " +
  "diagnostico ecografia radiografia neumonia dermatoscopia imagen imagenes deteccion"
).split(" ");

// Words that are right as written although a keyword is one letter away ("models" is not a typo of "model").
const COMMON = new Set(
  (
    "what when where which there their these those about would could should model models make made mean means " +
    "como cual cuando donde este esta esto para pero tiene tengo puedo puedes sobre desde entre otro otra todos todas " +
    "cuanto cuanta cuantos cuantas mejor peor usar usado usando listo lista listos listas modo moda"
  ).split(" "),
);

/** Optimal string alignment distance, stopping early once it exceeds `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    let rowMin = Infinity;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      rowMin = Math.min(rowMin, d[i][j]);
    }
    if (rowMin > max) return max + 1;
  }
  return d[a.length][b.length];
}

/**
 * The keyword or user word a misspelt word means, or the word itself. Only words found nowhere (not in the docs,
 * not a keyword, not the user's) are corrected, by one edit from five letters on and two from eight, and only when
 * one candidate is nearest: "experimneto" → "experimento", "diabtes" → "diabetes", but "models" stays.
 */
export function correctWord(word: string, targets: ReadonlySet<string>, known: ReadonlySet<string>): string {
  if (word.length < 5 || /\d|_/.test(word) || targets.has(word) || known.has(word) || COMMON.has(word)) return word;
  const max = word.length >= 8 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = max + 1;
  let tie = false;
  for (const t of targets) {
    if (t.length < 4) continue;
    // An inflection of a keyword ("modelos", "rejecting") is a word, not a typo.
    if (word.startsWith(t) || t.startsWith(word)) return word;
    const dist = editDistance(word, t, max);
    if (dist < bestDistance) [best, bestDistance, tie] = [t, dist, false];
    else if (dist === bestDistance && t !== best) tie = true;
  }
  return best && !tie ? best : word;
}

// Spanish phrases and words in the English the patterns read. Longer phrases first; only words that carry the
// question's intent are put into English, never the names a user gives things ("mama", "ecografia" stay).
const PHRASES: Array<[RegExp, string]> = [
  [/\bpor que\b/g, "why"],
  [/\bque tal\b/g, "how is"],
  [/\bcomo va\b/g, "how is"],
  [/\bcomo esta\b/g, "how is"],
  [/\bcomo le fue a\b/g, "how did"],
  [/\bcomo le fue\b/g, "how did"],
  [/\bque significa\b/g, "what is the meaning of"],
  [/\bquiere decir\b/g, "means"],
  [/\bque es\b/g, "what is"],
  [/\bcual es\b/g, "what is"],
  [/\bcuales son\b/g, "what are"],
  [/\bcuanto tiempo\b/g, "how long"],
  [/\bcuanto tarda\b/g, "how long will it take"],
  [/\bcuanto tardara\b/g, "how long will it take"],
  [/\bcuanto durara\b/g, "how long will it take"],
  [/\bcuanto dura\b/g, "how long will it take"],
  [/\bcuanto lleva\b/g, "how long will it take"],
  [/\bmas reciente\b/g, "latest"],
  [/\bintervalo de confianza\b/g, "confidence interval"],
  [/\bpunto de operacion\b/g, "operating point"],
  [/\bmapa de calor\b/g, "heat map"],
  [/\bsuficientemente bueno\b/g, "good enough"],
  [/\bsuficientemente buena\b/g, "good enough"],
  [/\bpractica clinica\b/g, "clinic"],
  [/\bla consulta\b/g, "the clinic"],
  [/\btodos los usuarios\b/g, "every user"],
  [/\bvuelve a entrenar\b/g, "retrain"],
  [/\bvolver a entrenar\b/g, "retrain"],
  [/\bcambia el nombre\b/g, "rename"],
  [/\bcambiar el nombre\b/g, "rename"],
  [/\bque gano y que pierdo\b/g, "what is the trade-off"],
  [/\bque sacrifico\b/g, "what is the trade-off"],
  [/\bclave de api\b/g, "api key"],
  [/\bnuevo experimento\b/g, "new experiment"],
  [/\btengo que arreglar\b/g, "should i fix"],
  [/\bhay que arreglar\b/g, "should i fix"],
];

const WORDS = new Map(
  Object.entries({
    experimento: "experiment",
    experimentos: "experiments",
    modelo: "model",
    modelos: "models",
    mi: "my",
    mis: "my",
    tu: "your",
    tus: "your",
    su: "its",
    sus: "its",
    el: "the",
    la: "the",
    los: "the",
    las: "the",
    del: "of the",
    al: "to the",
    un: "a",
    una: "a",
    le: "",
    les: "",
    usa: "use",
    de: "of",
    para: "for",
    con: "with",
    en: "in",
    y: "and",
    este: "this",
    esta: "this",
    esto: "this",
    ese: "that",
    esa: "that",
    umbral: "threshold",
    umbrales: "thresholds",
    sensibilidad: "sensitivity",
    especificidad: "specificity",
    exactitud: "accuracy",
    metricas: "metrics",
    metrica: "metric",
    intervalo: "interval",
    confianza: "confidence",
    rechazaron: "refused",
    rechazado: "refused",
    rechazada: "refused",
    rechazo: "refused",
    acepto: "accepted",
    fallo: "failed",
    columnas: "columns",
    variables: "inputs",
    entradas: "inputs",
    valores: "values",
    imagen: "image",
    imagenes: "images",
    tabla: "table",
    prediccion: "prediction",
    predecir: "predict",
    llamo: "call",
    llamar: "call",
    usar: "use",
    usarlo: "use it",
    usarla: "use it",
    uso: "use",
    envio: "send",
    enviar: "send",
    mando: "send",
    mandar: "send",
    borra: "delete",
    borrar: "delete",
    elimina: "delete",
    eliminar: "delete",
    quita: "delete",
    quitar: "delete",
    reentrena: "retrain",
    reentrenar: "retrain",
    entrena: "train",
    entrenar: "train",
    entrenarse: "train",
    entrenamiento: "training",
    cancela: "cancel",
    cancelar: "cancel",
    deten: "stop",
    cambia: "change",
    cambiar: "change",
    modifica: "change",
    baja: "lower",
    bajar: "lower",
    sube: "upload",
    subir: "upload",
    subo: "upload",
    consulta: "clinic",
    clinica: "clinic",
    pacientes: "patients",
    paciente: "patient",
    ninos: "children",
    fiable: "reliable",
    confiar: "trust",
    seguro: "safe",
    sirve: "good enough",
    vale: "good enough",
    lista: "list",
    listar: "list",
    muestra: "show",
    muestrame: "show me",
    ensename: "show me",
    listo: "ready",
    listos: "ready",
    mejor: "best",
    compara: "compare",
    comparar: "compare",
    clases: "classes",
    clase: "class",
    cuantos: "how many",
    cuantas: "how many",
    arreglar: "fix",
    corregir: "fix",
    significa: "means",
    explica: "explain",
    explicame: "explain",
    diferencia: "difference",
    hola: "hello",
    ayuda: "help",
    puedes: "can you",
    puedo: "can i",
    tengo: "have i",
    tienes: "have you",
    ultimo: "last",
    ultima: "last",
    reciente: "latest",
    estado: "status",
    tarda: "take",
    tardara: "take",
    como: "how",
    que: "what",
    cual: "which",
    quiero: "i want",
    ver: "see",
    hacer: "do",
    detecta: "detects",
    cajas: "boxes",
    recuadros: "boxes",
  }),
);

/** The message as the builtin's patterns read it: corrected, and in English where it was Spanish. */
export function understand(message: string, known: ReadonlySet<string>, userWords: Iterable<string> = []): string {
  const targets = new Set([...KEYWORDS, ...[...userWords].map(unaccent).filter((w) => /^[a-z]{4,}$/.test(w))]);
  let text = unaccent(message).replace(/[¿¡]/g, " ");
  text = text.replace(/[a-z]+/g, (w) => correctWord(w, targets, known));
  for (const [re, en] of PHRASES) text = text.replace(re, en);
  // Whole words only: "de" inside "dermatoscopia", or a snake_case code's pieces, are not words of their own.
  return text.replace(/(?<![a-z0-9_])[a-z]+(?![a-z0-9_])/g, (w) => WORDS.get(w) ?? w);
}
