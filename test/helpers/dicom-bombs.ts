import { constants, deflateRawSync } from "node:zlib";
import { dataSetBytes, SYNTAX, writeDicom } from "./dicom-writer.js";

/**
 * DICOM files that cost their reader far more than their size (security issue 48), for the tests and
 * bench/security/dicom-bombs.ts:
 * - a JPEG 2000 frame whose codestream states 16384x16384 pixels inside a DICOM whose header states a small image:
 *   OpenJPEG allocates what the codestream says (over 1 GB, 8-20 s of decoding) unless it is refused first;
 * - a deflated data set that inflates without end (zeros), the zip bomb of DICOM.
 */

/**
 * OpenJPEG 2.5.2's lossless codestreams of an all-zero 8-bit image, one tile, 5 decomposition levels, as
 * pylibjpeg-openjpeg 2.6 writes them: `openjpeg.encode(numpy.zeros((side, side), numpy.uint8))`. 586 bytes claim
 * 268 megapixels; the 4096 one is a legitimate image whose decode grows OpenJPEG's memory past its first 50 MiB.
 */
export const J2K_ZEROS = {
  16384: Buffer.from(
    "/0//UQApAAAAAEAAAABAAAAAAAAAAAAAAABAAAAAQAAAAAAAAAAAAAABAAEB/1IADAAAAAEABQQEAAH/XAATQAgQEBgQEBgQEBgQEBgQEBj/ZAAlAAFDcmVhdGVkIGJ5IE9wZW5KUEVHIHZlcnNpb24gMi41LjL/kAAKAAAAAAHRAAH/k/vNm82b82bzZs2bNmzZs2bzZvNm82bzZs2bNmzZs2b82bzZvzZvNmzZs2bNmzZvNm82bzZvNmzZs2bNmzZgEVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/EVBUr/9/gICAgID/2Q==",
    "base64",
  ),
  4096: Buffer.from(
    "/0//UQApAAAAABAAAAAQAAAAAAAAAAAAAAAQAAAAEAAAAAAAAAAAAAABAAEB/1IADAAAAAEABQQEAAH/XAATQAgQEBgQEBgQEBgQEBgQEBj/ZAAlAAFDcmVhdGVkIGJ5IE9wZW5KUEVHIHZlcnNpb24gMi41LjL/kAAKAAAAAAAvAAH/k+zZs2YRUFSv/38RUFSv/38RUFSv/38RUFSv/3+AgICAgP/Z",
    "base64",
  ),
};

/** A JPEG 2000 DICOM around one of J2K_ZEROS, its header stating `headerSide` x `headerSide` pixels. */
export function j2kDicom(codestreamSide: keyof typeof J2K_ZEROS, headerSide: number): Buffer {
  return writeDicom({ syntax: SYNTAX.j2k, rows: headerSide, columns: headerSide, pixels: [J2K_ZEROS[codestreamSide]] });
}

/**
 * A Deflated Explicit VR Little Endian DICOM of about `compressedBytes` whose data set inflates to about 1000 times
 * that: a 64x64 header, then a pixel data element of zeros. Built by concatenating independently deflated 1 MiB
 * blocks of zeros (each ends on a byte boundary, Z_SYNC_FLUSH), so no gigabytes are ever held here.
 */
export function deflateBomb(compressedBytes: number): Buffer {
  const block = deflateRawSync(Buffer.alloc(2 ** 20), { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
  const blocks = Math.max(1, Math.ceil(compressedBytes / block.length));
  const zeros = blocks * 2 ** 20;
  const head = dataSetBytes({ syntax: SYNTAX.deflated, rows: 64, columns: 64, pixels: new Uint8Array(0) });
  // The pixel data element writer wrote a zero length (the element is last): it states the zeros that follow.
  head.writeUInt32LE(Math.min(zeros, 0xfffffffe), head.length - 4);
  const start = deflateRawSync(head, { finishFlush: constants.Z_SYNC_FLUSH });
  const end = Buffer.from([0x03, 0x00]); // an empty final block (BFINAL 1, fixed Huffman, end-of-block)
  const body = Buffer.concat([start, ...Array.from({ length: blocks }, () => block), end]);
  return writeDicom({ syntax: SYNTAX.deflated, rows: 64, columns: 64, pixels: new Uint8Array(0) }, body, { alreadyDeflated: true });
}

/**
 * The same file with its first frame's codestream stating another size (JPEG SOF/SOF55 or JPEG 2000 SIZ), nothing
 * else changed: what an attacker sends to make a decoder allocate for `width` x `height` pixels.
 */
export function withStatedSize(file: Buffer, width: number, height: number): Buffer {
  const out = Buffer.from(file);
  const pixelData = out.indexOf(Buffer.from([0xe0, 0x7f, 0x10, 0x00]));
  const siz = out.indexOf(Buffer.from([0xff, 0x4f, 0xff, 0x51]), pixelData);
  if (siz > 0) {
    out.writeUInt32BE(width + out.readUInt32BE(siz + 16), siz + 8); // Xsiz = XOsiz + width
    out.writeUInt32BE(height + out.readUInt32BE(siz + 20), siz + 12);
    return out;
  }
  let i = out.indexOf(Buffer.from([0xff, 0xd8]), pixelData) + 2;
  while (i > 1 && i + 9 < out.length) {
    const marker = out[i + 1];
    if ((marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) || marker === 0xf7) {
      out.writeUInt16BE(height, i + 5);
      out.writeUInt16BE(width, i + 7);
      return out;
    }
    i += 2 + out.readUInt16BE(i + 2);
  }
  throw new Error("no JPEG or JPEG 2000 frame header found in the file");
}
