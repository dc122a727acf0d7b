// The Spanish of the API's error messages (issue 39: `message` in the language of Accept-Language, codes and
// field names unchanged). Two tables, read by error-language.ts at the edge, so no call site changes:
//
// - SPANISH_BY_CODE: one sentence per error code, said when the English message has no template below. Every code
//   the server can answer with must be here (test/unit/http-error-language.test.ts scans src/ and the docs' table).
// - SPANISH_TEMPLATES: the English messages as written at the call sites, with {placeholders} for what varies, and
//   their Spanish. The first whose English matches the whole message wins, so specific ones come first.
//
// "usted" form; field names, headers, paths, environment variables and commands stay as they are.

export const SPANISH_BY_CODE: Record<string, string> = {
  // DICOM (src/dicom, src/net/dicomweb.ts)
  invalid_dicom: "El archivo no es un DICOM que se pueda leer.",
  unsupported_transfer_syntax: "La sintaxis de transferencia de este DICOM no está admitida (el mensaje la nombra).",
  dicom_decode_failed: "Los píxeles de este DICOM no se pueden decodificar con su sintaxis de transferencia.",
  invalid_dicomweb_answer: "El servidor DICOMweb respondió algo que no es un DICOM legible.",
  unsupported_frame: "Un modelo puntúa el primer fotograma de un DICOM: pida /frames/1 o la instancia.",
  // PACS (src/pacs)
  send_back_unavailable:
    "send_back: la respuesta vuelve al PACS del que vino la imagen; configure el PACS (Ajustes → PACS) y envíe un enlace WADO-RS de una instancia bajo su dirección DICOMweb. No se predijo nada.",
  pacs_auto_score_unavailable:
    "No se pueden puntuar los estudios nuevos: el PACS no está configurado o no da su feed de cambios (hace falta un PACS Orthanc).",
  pacs_password_unreadable: "La contraseña del PACS guardada en Ajustes → PACS se selló con otra SECRETS_KEY: escríbala de nuevo.",
  // Monitoring alerts (src/monitoring/alerts.ts)
  alert_state_conflict:
    "La alerta no está en un estado que permita esto: solo se reconoce una alerta abierta, y una resuelta ya no cambia.",
  // 400
  invalid_request: "La solicitud no es válida: revise los campos indicados.",
  invalid_json: "El cuerpo de la solicitud no es JSON válido.",
  invalid_body_encoding: "El cuerpo no se puede descomprimir con su Content-Encoding.",
  invalid_table: "La tabla no se puede leer.",
  invalid_batch: "El archivo del lote no se puede leer.",
  upload_interrupted: "La subida se interrumpió antes de recibir todo el cuerpo; no se guardó nada.",
  missing_experiment_id: "Indique el modelo: experiment_id en el cuerpo, la cabecera x-experiment-id o el parámetro experiment_id.",
  invalid_uri: "La dirección de la imagen no es válida.",
  unsupported_uri_scheme:
    "Ese tipo de dirección no está permitido; use https://, http://, data:image/...;base64 o un enlace a su carpeta del almacenamiento (gs://, o s3:// si es S3).",
  invalid_data_uri: "El data URI no es válido: debe tener la forma data:image/<tipo>;base64,<datos>.",
  uri_credentials_not_allowed: "No se descargan direcciones con usuario:contraseña@.",
  // 401
  missing_api_key: "Envíe su clave de API en la cabecera Authorization: Bearer <clave>.",
  invalid_api_key: "La clave de API no es válida; cree una en /settings/api del panel o con ./builder keys create.",
  invalid_credentials: "El correo electrónico o la contraseña no son correctos.",
  session_required: "Inicie sesión primero: abra /signin en un navegador (o POST /v1/session).",
  invalid_session: "La sesión ha caducado o se cerró; vuelva a iniciar sesión.",
  missing_metrics_token: "/metrics necesita Authorization: Bearer <METRICS_TOKEN>.",
  invalid_metrics_token: "El token de métricas no es correcto.",
  // 403
  api_key_revoked: "Esta clave de API fue revocada; cree una nueva en /settings/api.",
  account_disabled: "Un administrador ha desactivado esta cuenta; pídale que la vuelva a activar.",
  admin_only: "Solo un administrador puede hacer esto.",
  invalid_setup_code: "El código de configuración no es el que este servidor escribió en su registro al arrancar; cópielo de allí.",
  signup_disabled: "El registro está desactivado en este servidor; pida una cuenta a su administrador (./builder users create).",
  signup_needs_admin:
    "El registro se abre cuando este servidor tiene un administrador: su primera cuenta se crea en la página de configuración con el código que el servidor escribió en su registro.",
  invalid_csrf_token: "Envíe el csrf_token de la sesión en la cabecera x-csrf-token.",
  forbidden: "No tiene permiso para hacer esto.",
  user_mismatch: "user_id debe ser su propio identificador de usuario.",
  blocked_host: "No se descargan imágenes de esa dirección.",
  blocked_address: "Esa dirección no es pública; solo se descargan direcciones públicas.",
  // 404
  not_found: "No se encontró lo solicitado.",
  invitation_invalid: "Este enlace de invitación no existe (quizá se copió incompleto).",
  reset_link_invalid: "Este enlace para restablecer la contraseña no existe (quizá se copió incompleto).",
  // 405
  method_not_allowed: "Este método no está permitido en esta ruta; la cabecera Allow indica los permitidos.",
  // 409
  conflict: "La solicitud entra en conflicto con el estado actual.",
  model_not_ready: "Este experimento aún no tiene un modelo publicado.",
  model_not_published: "Este experimento no tiene un modelo publicado.",
  outcomes_not_supported: "Los resultados reales se aceptan para modelos binarios y multiclase; este modelo es de otro tipo.",
  cannot_disable_self: "No puede desactivar su propia cuenta; pídaselo a otro administrador.",
  last_admin: "Es el último administrador activo: nombre primero administrador a otro usuario.",
  inprocess_runner: "Aquí los trabajos se ejecutan dentro del servidor (BUILDER_RUNNER=inprocess): no hay ningún worker que vaciar.",
  setup_done: "Este servidor ya tiene un administrador: inicie sesión o pida una cuenta a un administrador.",
  setup_code_expired:
    "El código de configuración ha caducado (sirve durante SETUP_CODE_TTL_HOURS horas desde que se escribe); reinicie el servidor para que escriba uno nuevo.",
  dataset_in_use: "Un experimento en cola o en curso usa estos datos; ?force=true lo cancela y los borra.",
  experiment_deleting: "El experimento se está eliminando.",
  experiment_finished: "El experimento ya terminó.",
  experiment_id_in_use: "Ese experiment_id ya lo usa otra solicitud; elija un experiment_id nuevo.",
  email_taken: "Ya existe una cuenta con ese correo electrónico.",
  batch_not_done: "El lote aún no ha terminado; sus resultados estarán listos cuando termine.",
  // 410
  invitation_used: "Esta invitación ya se utilizó.",
  invitation_expired: "Esta invitación ha caducado; pida una nueva.",
  invitation_revoked: "Esta invitación fue retirada; pida una nueva.",
  reset_link_used: "Este enlace para restablecer la contraseña ya se utilizó.",
  reset_link_expired: "Este enlace para restablecer la contraseña ha caducado; pida uno nuevo.",
  reset_link_revoked: "Este enlace para restablecer la contraseña fue retirado o sustituido por otro más reciente.",
  // 413
  payload_too_large: "El cuerpo o el archivo supera el tamaño máximo permitido.",
  too_many_values: "El cuerpo tiene demasiados valores JSON; una predicción es una imagen o una fila.",
  too_many_images: "El zip tiene demasiadas imágenes para un lote con mapas; divídalo o envíelo sin overlays=true.",
  image_too_large: "La imagen supera el tamaño máximo permitido.",
  image_too_many_pixels: "La imagen tiene más píxeles de los permitidos.",
  // 415
  not_a_zip:
    "El archivo no es un zip: ponga el CSV y sus imágenes en un .zip y súbalo; la tabla de una tarea de datos puede subirse tal cual, como .csv o .xlsx.",
  unsupported_encoding: "Codificación no admitida.",
  unsupported_media_type: "Tipo de contenido no admitido.",
  unsupported_image_type: "Los bytes no son una imagen PNG, JPEG, WebP, GIF, TIFF ni AVIF.",
  invalid_image: "La imagen no se puede decodificar.",
  // 422
  no_threshold: "Ningún umbral alcanza ese objetivo en los datos de validación.",
  fetch_failed: "No se pudo descargar la dirección.",
  fetch_timeout: "La dirección no respondió a tiempo.",
  host_not_found: "El nombre del servidor no existe.",
  too_many_redirects: "La dirección redirige demasiadas veces.",
  not_binary: "Esto solo es posible en un modelo de dos clases.",
  no_input_check:
    "Este modelo se construyó antes de que existiera la comprobación de entradas desconocidas: vuelva a construirlo para comprobar sus entradas.",
  unfamiliar_input:
    "Esta entrada no se parece a los datos con los que se entrenó el modelo, y el modelo está configurado para rechazarlas (input_check mode refuse).",
  no_operating_scores: "Este modelo no guardó las puntuaciones de validación necesarias para elegir un umbral.",
  // 422: a dataset refused when the experiment is posted (src/datasets)
  csv_missing: "El zip no contiene ningún archivo .csv; ponga el CSV en el nivel superior del zip.",
  csv_ambiguous: "El zip contiene varios archivos CSV; deje uno solo en el nivel superior.",
  csv_empty: "El CSV está vacío.",
  csv_encoding: "El CSV no es texto; guárdelo como «CSV UTF-8» desde la hoja de cálculo.",
  csv_malformed: "El CSV no se puede leer.",
  csv_too_large: "El CSV es demasiado grande.",
  csv_too_many_rows: "El CSV tiene más filas de las que admite una tabla (el mensaje dice el límite).",
  coco_malformed: "El JSON COCO no es válido.",
  coco_too_large: "El JSON COCO es demasiado grande.",
  annotations_missing:
    "Un zip de detección necesita un CSV (una fila por caja), archivos XML Pascal VOC o un JSON COCO; no se encontró ninguno.",
  detection_needs_vision: "La detección de objetos trabaja con imágenes: use la tarea 'vision'.",
  split_col_unsupported: "split_col aún no se admite en detección; omítalo y Builder dividirá por paciente.",
  zip_unreadable: "El archivo no es un zip legible.",
  zip_corrupt: "El zip está dañado.",
  zip_unsafe_path: "Una entrada del zip tiene una ruta no segura.",
  zip_symlink: "El zip contiene un enlace simbólico; añada el archivo en sí.",
  zip_encrypted: "El zip está cifrado; suba un zip sin contraseña.",
  zip_too_many_entries: "El zip tiene demasiadas entradas.",
  zip_duplicate_entry: "El zip contiene dos veces el mismo archivo.",
  zip_too_large: "El zip descomprimido supera el tamaño máximo.",
  zip_bomb: "El zip se expande demasiado respecto a su tamaño; parece una bomba zip.",
  positive_class_not_found: "La clase positiva indicada no aparece en la columna de la etiqueta.",
  positive_class_not_binary: "Solo se puede indicar una clase positiva en una tarea de dos clases.",
  pipeline_data_error: "El entrenamiento no pudo leer los datos.",
  // 422: a dataset built from the PACS (src/pacs/import.ts)
  pacs_import_empty: "No se pudo obtener ninguna instancia del PACS, así que no se guardó nada (el mensaje da el motivo de cada UID).",
  too_many_instances: "Los UID abarcan más instancias de las que admite una importación: divida el CSV.",
  // 429
  rate_limit_exceeded: "Se ha superado el límite de solicitudes; vuelva a intentarlo cuando indique Retry-After.",
  too_many_experiments: "Ya tiene el máximo de experimentos en cola o en curso; espere a que termine uno o cancele uno.",
  too_many_streams: "Ya tiene el máximo de flujos de eventos abiertos; cierre uno.",
  // 5xx
  internal_error: "Algo falló por nuestra parte; el id de la solicitud lo identifica en los registros.",
  chat_backend_unavailable: "El servidor del asistente no está disponible o dio una respuesta inutilizable; inténtelo más tarde.",
  chat_backend_timeout: "El servidor del asistente no respondió a tiempo; inténtelo de nuevo o haga una pregunta más corta.",
  not_ready: "La base de datos no responde.",
};

export const SPANISH_TEMPLATES: Array<[english: string, spanish: string]> = [
  // monitoring alerts (src/monitoring/alerts.ts, src/http/routes/monitoring-alerts.ts)
  [
    "this server cannot sign webhooks: its administrator must set CALLBACK_SECRET first",
    "este servidor no puede firmar webhooks: su administrador debe definir antes CALLBACK_SECRET",
  ],
  [
    "this server cannot send e-mail: its administrator must set SMTP_HOST and SMTP_FROM first",
    "este servidor no puede enviar correo: su administrador debe definir antes SMTP_HOST y SMTP_FROM",
  ],
  ["needs CALLBACK_SECRET set on the server", "necesita CALLBACK_SECRET definido en el servidor"],
  ["needs SMTP_HOST set on the server", "necesita SMTP_HOST definido en el servidor"],
  [
    "the alert is {state}: only an open alert can be acknowledged, and a resolved one cannot change",
    "la alerta está en estado {state}: solo se reconoce una alerta abierta, y una resuelta ya no cambia",
  ],
  ["say what was found or done", "diga qué se encontró o qué se hizo"],
  ["must be an alert id", "debe ser el id de una alerta"],
  ["must be an e-mail address", "debe ser una dirección de correo electrónico"],
  ["at most 20 addresses", "como mucho 20 direcciones"],
  ["must be an http:// or https:// URL", "debe ser una URL http:// o https://"],
  ["at most 2,000 characters", "como mucho 2.000 caracteres"],
  // one column, one role (src/experiments/request-rules.ts columnRoleRules)
  ["'{column}' is both a label and a data column", "'{column}' es a la vez una columna de etiqueta y una de datos"],
  ["'{column}' is both a label and the image column", "'{column}' es a la vez una columna de etiqueta y la columna de imágenes"],
  ["'{column}' is both the split column and a label", "'{column}' es a la vez la columna de partición y una etiqueta"],
  ["'{column}' is both a data column and the image column", "'{column}' es a la vez una columna de datos y la columna de imágenes"],
  ["'{column}' is both the split column and a data column", "'{column}' es a la vez la columna de partición y una de datos"],
  ["'{column}' is both the split column and the image column", "'{column}' es a la vez la columna de partición y la de imágenes"],
  // unfamiliar inputs (src/serving/input-check.ts)
  [
    "this image does not look like the images this model was trained on; the model is set to refuse such inputs (input_check mode refuse)",
    "esta imagen no se parece a las imágenes con las que se entrenó este modelo; el modelo está configurado para rechazar esas entradas (input_check mode refuse)",
  ],
  [
    "this row's values lie far outside the data this model was trained on; the model is set to refuse such inputs (input_check mode refuse)",
    "los valores de esta fila quedan muy lejos de los datos con los que se entrenó este modelo; el modelo está configurado para rechazar esas entradas (input_check mode refuse)",
  ],
  // authentication and sessions
  ["send your API key as Authorization: Bearer <key>", "envíe su clave de API como Authorization: Bearer <clave>"],
  [
    "the API key is not valid; create one at /settings/api in the dashboard or with ./builder keys create",
    "la clave de API no es válida; cree una en /settings/api del panel o con ./builder keys create",
  ],
  ["this API key was revoked; create a new one at /settings/api", "esta clave de API fue revocada; cree una nueva en /settings/api"],
  [
    "sign in first: open /signin in a browser (or POST /v1/session)",
    "inicie sesión primero: abra /signin en un navegador (o POST /v1/session)",
  ],
  ["the session has expired or was signed out; sign in again", "la sesión ha caducado o se cerró; vuelva a iniciar sesión"],
  ["send the session's csrf_token in the x-csrf-token header", "envíe el csrf_token de la sesión en la cabecera x-csrf-token"],
  ["the email or the password is wrong", "el correo electrónico o la contraseña no son correctos"],
  [
    "this account has been disabled by an administrator; ask them to enable it again",
    "un administrador ha desactivado esta cuenta; pídale que la vuelva a activar",
  ],
  ["too many sign-in attempts; try again in {s} s", "demasiados intentos de inicio de sesión; vuelva a intentarlo en {s} s"],
  [
    "{who} allows {n} requests per minute; retry after the reset",
    "{who} permite {n} solicitudes por minuto; vuelva a intentarlo tras el reinicio",
  ],
  ["at most {n} link attempts per 15 minutes from one address", "como máximo {n} intentos con enlaces cada 15 minutos desde una dirección"],
  [
    "at most {n} setup attempts per 15 minutes from one address",
    "como máximo {n} intentos de configuración cada 15 minutos desde una dirección",
  ],
  ["at most {n} sign-ups per hour from one address", "como máximo {n} registros por hora desde una dirección"],
  ["the current password is not correct", "la contraseña actual no es correcta"],
  ["the password is not correct; nothing was erased", "la contraseña no es correcta; no se borró nada"],
  ["not correct", "no es correcta"],
  ["the user no longer exists", "el usuario ya no existe"],
  ["no user with this id", "no hay ningún usuario con este id"],
  ["a user with email {email} already exists", "ya existe un usuario con el correo {email}"],
  [
    "an account with email {email} already exists: sign in with it, or use another address",
    "ya existe una cuenta con el correo {email}: inicie sesión con ella o use otra dirección",
  ],
  ["already has an account", "ya tiene una cuenta"],
  ["the metrics token is not correct", "el token de métricas no es correcto"],
  // requests and routes
  ["{n} invalid fields: {fields}", "{n} campos no válidos: {fields}"],
  ["1 invalid field: {fields}", "1 campo no válido: {fields}"],
  ["no route for {method} {path}", "no existe la ruta {method} {path}"],
  ["{method} is not allowed on {path}; use {methods}", "{method} no está permitido en {path}; use {methods}"],
  ["the body is not valid JSON: it must be an object or an array", "el cuerpo no es JSON válido: debe ser un objeto o una lista"],
  ["the body is not valid JSON: {why}", "el cuerpo no es JSON válido: {why}"],
  ["the JSON body is larger than {n} bytes", "el cuerpo JSON supera los {n} bytes"],
  ["the request was interrupted before the whole body arrived", "la solicitud se interrumpió antes de recibir todo el cuerpo"],
  [
    "a string in the body contains the NUL character (\\u0000), which no field accepts",
    "una cadena del cuerpo contiene el carácter NUL (\\u0000), que ningún campo acepta",
  ],
  ["required", "obligatorio"],
  ["must be a positive integer", "debe ser un entero positivo"],
  ["x-experiment-id must be a positive integer", "x-experiment-id debe ser un entero positivo"],
  ["user_id must be your own user id", "user_id debe ser su propio identificador de usuario"],
  // experiments, models, reports
  ["experiment {id} not found", "no se encontró el experimento {id}"],
  ["version {v} of experiment {id} not found", "no se encontró la versión {v} del experimento {id}"],
  ["experiment {id} is being deleted", "el experimento {id} se está eliminando"],
  ["experiment {id} is already {status}", "el experimento {id} ya está {status}"],
  ["experiment {id} has no published model (status {status})", "el experimento {id} no tiene un modelo publicado (estado: {status})"],
  [
    "experiment {id} has no published model: it ended {status} without a model",
    "el experimento {id} no tiene un modelo publicado: terminó {status} sin modelo",
  ],
  [
    "experiment {id} has no published model: it is {status}; try again when it is ready",
    "el experimento {id} aún no tiene un modelo publicado: está {status}; vuelva a intentarlo cuando esté listo",
  ],
  ["the experiment is {status}", "el experimento está {status}"],
  [
    "experiment {id} has no report yet (status {status}); reports exist once it is ready",
    "el experimento {id} aún no tiene informe (estado: {status}); el informe existe cuando está listo",
  ],
  [
    "experiment {id} has no model card yet (status {status}); it exists once the experiment is ready",
    "el experimento {id} aún no tiene ficha del modelo (estado: {status}); existe cuando el experimento está listo",
  ],
  ["experiment {id} has no figure named {name}", "el experimento {id} no tiene ninguna figura llamada {name}"],
  [
    "experiment_id {id} is already used by a different request; choose a new experiment_id",
    "el experiment_id {id} ya lo usa otra solicitud distinta; elija un experiment_id nuevo",
  ],
  ["source_experiment_id: you have no experiment {id}", "source_experiment_id: no tiene ningún experimento {id}"],
  ["you have no experiment {id}", "no tiene ningún experimento {id}"],
  [
    "you already have {n} experiments queued or running (MAX_ACTIVE_EXPERIMENTS_PER_USER); wait for one to finish or cancel one, then post again",
    "ya tiene {n} experimentos en cola o en curso (MAX_ACTIVE_EXPERIMENTS_PER_USER); espere a que termine uno o cancele uno y vuelva a enviarlo",
  ],
  ["conversation not found", "no se encontró la conversación"],
  [
    "jobs run inside the server here (BUILDER_RUNNER=inprocess): there is no worker to drain; stop the server to stop its jobs",
    "aquí los trabajos se ejecutan dentro del servidor (BUILDER_RUNNER=inprocess): no hay ningún worker que vaciar; detenga el servidor para detener sus trabajos",
  ],
  [
    "no running worker has the id or host name {target}; ./builder worker list shows them",
    "ningún worker en marcha tiene el identificador o el nombre de servidor {target}; ./builder worker list los muestra",
  ],
  ["API key not found", "no se encontró la clave de API"],
  ["the model file is missing from storage", "el archivo del modelo no está en el almacenamiento"],
  ["no such object in your storage", "ese objeto no está en su almacenamiento"],
  // files and uploads
  ["no file at {path}; upload it first (PUT /v1/files/{path2})", "no hay ningún archivo en {path}; súbalo primero (PUT /v1/files/{path2})"],
  ["no file at {path}", "no hay ningún archivo en {path}"],
  [
    "{path} has more than {max} data rows, the most a table may have (Builder's table row limit): keep a sample of the rows, or split the study into several tables",
    "{path} tiene más de {max} filas de datos, lo máximo que admite una tabla (el límite de filas de Builder): conserve una muestra de las filas o divida el estudio en varias tablas",
  ],
  ["no folder {path}", "no existe la carpeta {path}"],
  [
    "the file is larger than the upload limit of {n} bytes (MAX_UPLOAD_BYTES)",
    "el archivo supera el límite de subida de {n} bytes (MAX_UPLOAD_BYTES)",
  ],
  ["the file is larger than the upload limit of {n} bytes", "el archivo supera el límite de subida de {n} bytes"],
  [
    "the upload was interrupted before the whole body arrived; nothing was stored",
    "la subida se interrumpió antes de recibir todo el cuerpo; no se guardó nada",
  ],
  ["the form has no 'file' field", "el formulario no tiene el campo 'file'"],
  ["send the 'path' field before the 'file' field", "envíe el campo 'path' antes del campo 'file'"],
  ["required, before file", "obligatorio, antes de file"],
  // a batch's workbook (src/batches/workbook.ts), before the general "{name} ..." below
  [
    'the workbook cannot be read as an Excel workbook (.xlsx): it is damaged, or another format renamed (an old .xls?). Save it again from the spreadsheet as .xlsx, or as "CSV UTF-8"',
    "el libro no se puede leer como libro de Excel (.xlsx): está dañado o es otro formato renombrado (¿un .xls antiguo?). Guárdelo de nuevo desde la hoja de cálculo como .xlsx o como «CSV UTF-8»",
  ],
  ["the workbook has no rows in its first sheet", "el libro no tiene filas en su primera hoja"],
  ["{name} is empty", "{name} está vacío"],
  ["{name} has no rows in its first sheet", "{name} no tiene filas en su primera hoja"],
  // predictions
  ["the image cannot be decoded", "la imagen no se puede decodificar"],
  // DICOM limits (src/dicom): a frame whose own header disagrees with the file's, a deflated data set too large
  [
    "the pixel data cannot be decoded: the compressed frame states {stated} pixels with {n} sample(s) each; the header says {size} with {m} (transfer syntax {syntax})",
    "los píxeles no se pueden decodificar: el fotograma comprimido declara {stated} píxeles con {n} muestra(s) cada uno; la cabecera dice {size} con {m} (sintaxis de transferencia {syntax})",
  ],
  [
    "the pixel data cannot be decoded: the compressed frame does not state its size (no frame header where its format puts one) (transfer syntax {syntax})",
    "los píxeles no se pueden decodificar: el fotograma comprimido no declara su tamaño (falta la cabecera de fotograma donde su formato la pone) (sintaxis de transferencia {syntax})",
  ],
  [
    "the deflated DICOM data set inflates to more than {n} bytes, more than an image of at most {p} pixels needs (transfer syntax {syntax})",
    "el conjunto de datos DICOM comprimido con deflate se descomprime en más de {n} bytes, más de lo que necesita una imagen de como mucho {p} píxeles (sintaxis de transferencia {syntax})",
  ],
  [
    "the deflated DICOM data set inflates to more than {n} bytes, over 64 times the size of the file (transfer syntax {syntax})",
    "el conjunto de datos DICOM comprimido con deflate se descomprime en más de {n} bytes, más de 64 veces el tamaño del archivo (sintaxis de transferencia {syntax})",
  ],
  ["the image has {size} pixels; the limit is {n} pixels", "la imagen tiene {size} píxeles; el límite es de {n} píxeles"],
  ["the image is larger than the limit of {n} bytes", "la imagen supera el límite de {n} bytes"],
  ["the URL answered HTTP {status}", "la dirección respondió HTTP {status}"],
  ["the URL did not answer within {n} ms", "la dirección no respondió en {n} ms"],
  ["the host {host} does not resolve", "el servidor {host} no existe"],
  ["message must be an image URI", "message debe ser la dirección (URI) de una imagen"],
  [
    "message must be an image URI (https://, http://, data:image/...;base64, data:application/dicom;base64, or {scheme}://)",
    "message debe ser la dirección (URI) de una imagen (https://, http://, data:image/...;base64, data:application/dicom;base64 o {scheme}://)",
  ],
  [
    "the scheme {got} is not allowed; use https://, http://, data:image/...;base64, data:application/dicom;base64, or {scheme}://",
    "el esquema {got} no está permitido; use https://, http://, data:image/...;base64, data:application/dicom;base64 o {scheme}://",
  ],
  [
    "this deployment's storage is linked as {link}, not {scheme}://",
    "el almacenamiento de este servidor se enlaza como {link}, no con {scheme}://",
  ],
  ["{scheme} URIs look like {link}", "las direcciones {scheme} tienen la forma {link}"],
  ["expected a string", "se esperaba una cadena de texto"],
  [
    "name the model: experiment_id in the body, the x-experiment-id header or the experiment_id query parameter",
    "indique el modelo: experiment_id en el cuerpo, la cabecera x-experiment-id o el parámetro experiment_id",
  ],
  // a dataset built from the PACS (src/pacs/import.ts): the refusals and each failed UID's reason
  [
    "no PACS is configured: save its DICOMweb address in Settings → PACS first",
    "no hay ningún PACS configurado: guarde primero su dirección DICOMweb en Ajustes → PACS",
  ],
  ["csv: needs a header row and at least one row of UIDs", "csv: necesita una fila de encabezado y al menos una fila de UID"],
  ["csv: cannot be read as CSV: {why}", "csv: no se puede leer como CSV: {why}"],
  ["uid_col: the CSV has no column '{col}' (its columns: {cols})", "uid_col: el CSV no tiene la columna '{col}' (sus columnas: {cols})"],
  ["patient_col: the CSV has no column '{col}'", "patient_col: el CSV no tiene la columna '{col}'"],
  ["csv: row {row}: the column '{col}' is empty", "csv: fila {row}: la columna '{col}' está vacía"],
  [
    "csv: the column '{col}' is the one Builder writes; rename yours",
    "csv: la columna '{col}' es la que escribe Builder; cambie el nombre de la suya",
  ],
  [
    "the UIDs expand to {n} instances; one import holds at most {max}: split the CSV",
    "los UID abarcan {n} instancias; una importación admite como máximo {max}: divida el CSV",
  ],
  [
    "no instance could be retrieved, so nothing was stored: {why}",
    "no se pudo obtener ninguna instancia, así que no se guardó nada: {why}",
  ],
  ["no study, series or instance with this UID in the PACS", "el PACS no tiene ningún estudio, serie o instancia con este UID"],
  [
    "send_back: the answers go back as DICOM into each image's study: send a zip of DICOM images to an image model; nothing was scored",
    "send_back: las respuestas vuelven como DICOM al estudio de cada imagen: envíe un zip de imágenes DICOM a un modelo de imágenes; no se puntuó nada",
  ],
  [
    "send_back: no PACS is configured (Settings → PACS); nothing was scored",
    "send_back: no hay ningún PACS configurado (Ajustes → PACS); no se puntuó nada",
  ],
  [
    "the answers go back as DICOM into each image's study: send a zip of DICOM images to an image model",
    "las respuestas vuelven como DICOM al estudio de cada imagen: envíe un zip de imágenes DICOM a un modelo de imágenes",
  ],
  ["no PACS is configured (Settings → PACS)", "no hay ningún PACS configurado (Ajustes → PACS)"],
  ["the PACS connection was removed before the batch began", "la conexión con el PACS se eliminó antes de que empezara el lote"],
  ["not a DICOM UID (digits and dots, at most 64)", "no es un UID DICOM (dígitos y puntos, como máximo 64)"],
  ["the series holds no instance", "la serie no contiene ninguna instancia"],
  ["the PACS refused the credentials (HTTP {status})", "el PACS rechazó las credenciales (HTTP {status})"],
  ["the PACS has no such instance (HTTP 404)", "el PACS no tiene esa instancia (HTTP 404)"],
  ["the PACS answered the search with HTTP {status}", "el PACS respondió a la búsqueda con HTTP {status}"],
  ["the PACS answered the retrieval with HTTP {status}", "el PACS respondió a la descarga con HTTP {status}"],
  ["the PACS answered the search with something that is not DICOM JSON", "el PACS respondió a la búsqueda con algo que no es DICOM JSON"],
  ["the PACS's search answer lacks the study or series UID", "la respuesta de búsqueda del PACS no trae el UID del estudio o de la serie"],
  [
    "its header says text is burned into the pixels (BurnedInAnnotation YES), which Builder cannot remove",
    "su cabecera dice que hay texto grabado en los píxeles (BurnedInAnnotation YES), que Builder no puede quitar",
  ],
  [
    "its transfer syntax ({uid}) is not one the import rewrites",
    "su sintaxis de transferencia ({uid}) no es una que la importación reescriba",
  ],
  ["it has no {attribute}", "no tiene {attribute}"],
  ["the image has more than {n} pixels (FETCH_MAX_PIXELS)", "la imagen tiene más de {n} píxeles (FETCH_MAX_PIXELS)"],
  // batches
  ["no batch {id}", "no existe el lote {id}"],
  ["the batch is {status}; its results are ready when it is done", "el lote está {status}; sus resultados estarán listos cuando termine"],
  ["the batch is {status}; its overlays are ready when it is done", "el lote está {status}; sus mapas estarán listos cuando termine"],
  ["the file is not a readable zip archive", "el archivo no es un zip legible"],
  // why a batch failed (src/batches/refusals.ts; test/unit/batch-refusals.test.ts checks that each has its Spanish)
  [
    "the row on line {line} is longer than {max}, the most one row of a table may hold: is the file a table saved as CSV?",
    "la fila de la línea {line} supera {max}, lo máximo que puede ocupar una fila de una tabla: ¿es el archivo una tabla guardada como CSV?",
  ],
  [
    'line {line} opens a value with a quote (") that never closes, so the rest of the file would be read as that one value: close the quote, or remove it',
    'la línea {line} abre un valor con una comilla (") que nunca se cierra, así que el resto del archivo se leería como ese único valor: cierre la comilla o quítela',
  ],
  [
    'line {line} opens a value with a quote (") that does not close within {max}, the most one row of a table may hold: close the quote, or remove it',
    'la línea {line} abre un valor con una comilla (") que no se cierra en {max}, lo máximo que puede ocupar una fila de una tabla: cierre la comilla o quítela',
  ],
  [
    "line {line}, column {column}: a quoted value has more text after its closing quote; put the whole value inside the quotes",
    "línea {line}, columna {column}: un valor entre comillas tiene más texto tras la comilla de cierre; ponga el valor entero dentro de las comillas",
  ],
  [
    "the table is empty: it needs a header line naming the model's inputs, then one row per patient",
    "la tabla está vacía: necesita una línea de encabezado con las entradas del modelo y después una fila por paciente",
  ],
  [
    "the table has no column {columns}; this model reads {reads} (by name, in any order)",
    "columnas que faltan en la tabla: {columns}; este modelo lee {reads} (por nombre, en cualquier orden)",
  ],
  [
    "the table has more than {max} cells (rows × columns, here {width} columns), the most one batch reads (BATCH_MAX_CELLS): split it into files of at most {rows} rows",
    "la tabla tiene más de {max} celdas (filas × columnas, aquí {width} columnas), lo máximo que lee un lote (BATCH_MAX_CELLS): divídala en archivos de {rows} filas como máximo",
  ],
  [
    'the workbook expands past {limit} (ZIP_MAX_COMPRESSION_RATIO: {ratio} times its {size}, at least 1 MiB), as a zip bomb does: save its sheet as "CSV UTF-8" and send the CSV',
    "el libro se expande más allá de {limit} (ZIP_MAX_COMPRESSION_RATIO: {ratio} veces sus {size}, al menos 1 MiB), como lo hace una bomba zip: guarde su hoja como «CSV UTF-8» y envíe el CSV",
  ],
  [
    'the workbook\'s shared texts take {size}, more than the {max} a batch reads from an .xlsx: save its sheet as "CSV UTF-8" and send the CSV',
    "los textos compartidos del libro ocupan {size}, más de los {max} que un lote lee de un .xlsx: guarde su hoja como «CSV UTF-8» y envíe el CSV",
  ],
  [
    "results.csv would be larger than {max}, the most one batch writes for a file of {size} ({k} times its size, at least {floor}): split the file into smaller ones",
    "results.csv superaría {max}, lo máximo que escribe un lote para un archivo de {size} ({k} veces su tamaño, al menos {floor}): divida el archivo en otros más pequeños",
  ],
  ["the zip archive is damaged after the entry “{name}”", "el zip está dañado después de la entrada “{name}”"],
  [
    "the zip entry “{name}” cannot be read: the archive is damaged there",
    "la entrada del zip “{name}” no se puede leer: el archivo está dañado en ese punto",
  ],
  ["the zip has {n} entries; the limit is {max}", "el zip tiene {n} entradas; el límite es {max}"],
  [
    "the zip entry “{name}” is {size}; one image may be at most {max} (FETCH_MAX_BYTES)",
    "la entrada del zip “{name}” ocupa {size}; una imagen puede ocupar como máximo {max} (FETCH_MAX_BYTES)",
  ],
  [
    "the zip holds no images (.png, .jpg, .jpeg, .bmp, .tif, .gif, .webp)",
    "el zip no contiene imágenes (.png, .jpg, .jpeg, .bmp, .tif, .gif, .webp)",
  ],
  [
    "the zip entry '{name}' has an absolute path; zip entries must be relative",
    "la entrada del zip '{name}' tiene una ruta absoluta; las entradas de un zip deben ser relativas",
  ],
  [
    "the zip entry '{name}' points outside the archive ('..'); it was refused",
    "la entrada del zip '{name}' apunta fuera del archivo ('..'); se rechazó",
  ],
  [
    "the zip entry '{name}' has an empty segment or a control character",
    "la entrada del zip '{name}' tiene un segmento vacío o un carácter de control",
  ],
  [
    "the zip entry '{name}' is a symbolic link; links are refused (add the file itself)",
    "la entrada del zip '{name}' es un enlace simbólico; los enlaces se rechazan (añada el archivo en sí)",
  ],
  [
    "the zip entry '{name}' is encrypted; upload a zip without a password",
    "la entrada del zip '{name}' está cifrada; suba un zip sin contraseña",
  ],
  [
    "the zip entry '{name}' expands {n} times (limit {max}); it looks like a zip bomb",
    "la entrada del zip '{name}' se expande {n} veces (límite {max}); parece una bomba zip",
  ],
  [
    "the server stopped while this batch was being scored; send the file again",
    "el servidor se detuvo mientras se puntuaba este lote; envíe el archivo de nuevo",
  ],
  [
    "scoring stopped on an internal error; the request id in the server's log has the details",
    "la puntuación se detuvo por un error interno; el registro del servidor tiene los detalles",
  ],
  [
    'the workbook is larger than {max}, the most an .xlsx may be (it is read whole): save its sheet as "CSV UTF-8" and send the CSV',
    "el libro supera {max}, lo máximo que puede ocupar un .xlsx (se lee entero): guarde su hoja como «CSV UTF-8» y envíe el CSV",
  ],
  [
    "the file is larger than {max} (MAX_UPLOAD_BYTES): split it into several batches",
    "el archivo supera {max} (MAX_UPLOAD_BYTES): divídalo en varios lotes",
  ],
  ["this is a table model: send the rows as text/csv or an .xlsx", "este es un modelo de tabla: envíe las filas como text/csv o un .xlsx"],
  [
    "this is an image model: send a zip of images as application/zip",
    "este es un modelo de imágenes: envíe un zip de imágenes como application/zip",
  ],
  ["the database does not answer", "la base de datos no responde"],
];

/** Words the templates' {status} takes, in Spanish: an experiment's or a batch's state. */
export const SPANISH_STATUS: Record<string, string> = {
  queued: "en cola",
  fetching: "descargando los datos",
  validating: "validando",
  training: "entrenando",
  evaluating: "evaluando",
  publishing: "publicando",
  ready: "listo",
  invalid_dataset: "con datos no válidos",
  failed: "fallido",
  cancelled: "cancelado",
  deleting: "eliminándose",
  running: "en curso",
  done: "terminado",
};
