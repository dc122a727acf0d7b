/**
 * Whether a PNG or JPEG file stores one colour channel (grey, with or without alpha), read from the first bytes of its
 * header in JS: the same answer as sharp's metadata() gives (channels less alpha equal 1), without its second parse of
 * the file, which cost every sharp-decoded image about 0.2-0.3 ms (bench/serve/decode-grey.ts,
 * bench/serve/notebook/2026-11-29-monitoring-hotpath.md). undefined when the bytes are neither, or are a case left to
 * sharp (a palette PNG, a JPEG whose frame header is not found): the caller then asks metadata().
 */
export function storedGreyFromHeader(b: Uint8Array): boolean | undefined {
  // PNG: the signature, then IHDR first; its colour type (byte 25): 0 grey, 4 grey + alpha, 2 RGB, 6 RGBA, 3 palette.
  if (b.length >= 26 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[12] === 0x49 && b[15] === 0x52) {
    const type = b[25];
    return type === 0 || type === 4 ? true : type === 2 || type === 6 ? false : undefined;
  }
  // JPEG: markers from SOI up to the first frame header (SOF0-15 less DHT C4, JPG C8, DAC CC); its component count.
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2;
    while (i + 3 < b.length) {
      if (b[i] !== 0xff) return undefined;
      const m = b[i + 1];
      if (m === 0xff) {
        i++; // fill byte
        continue;
      }
      if (m === 0x01 || (m >= 0xd0 && m <= 0xd7)) {
        i += 2; // standalone markers
        continue;
      }
      if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) return i + 9 < b.length ? b[i + 9] === 1 : undefined;
      if (m === 0xda || m === 0xd9) return undefined; // scan or end before any frame header
      i += 2 + ((b[i + 2] << 8) | b[i + 3]);
    }
  }
  return undefined;
}
