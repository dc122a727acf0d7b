import { ApiError, msg, type Message } from "../errors.js";
import { describeSyntax, type TransferSyntax } from "./transfer-syntax.js";

/**
 * A DICOM that cannot become an image: not a DICOM at all, no pixel data, a transfer syntax Builder does not
 * decode, or pixel data its decoder rejects. The message and details name the transfer syntax (name and UID)
 * whenever the file got far enough to state one, because that is what a PACS export can be asked to change.
 * Never carries a header value other than technical ones (no names, IDs or dates).
 */
export class DicomError extends ApiError {
  constructor(
    code: "invalid_dicom" | "unsupported_transfer_syntax" | "dicom_decode_failed" | "image_too_many_pixels",
    problem: Message,
    public readonly syntax?: TransferSyntax,
    status = code === "image_too_many_pixels" ? 413 : 415,
  ) {
    super(
      status,
      code,
      syntax ? msg("dicom.with_syntax", { problem, syntax: describeSyntax(syntax) }) : problem,
      syntax ? { transfer_syntax: syntax.name, transfer_syntax_uid: syntax.uid } : undefined,
    );
  }
}
