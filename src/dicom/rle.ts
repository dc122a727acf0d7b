/**
 * DICOM RLE Lossless (PS3.5 annex G): a 64-byte header (segment count, then up to 15 segment offsets), each segment
 * one byte plane PackBits-coded: for every sample, its most significant byte first. The result is planar by sample
 * (all R, then all G, then all B), as PS3.5 G.2 lays the segments out, in the native byte order of `bitsAllocated`.
 */
export function decodeRle(
  frame: Uint8Array,
  rows: number,
  columns: number,
  samplesPerPixel: number,
  bitsAllocated: number,
): Uint8Array | Uint16Array | Uint32Array {
  const bytesPerSample = bitsAllocated / 8;
  if (bytesPerSample !== 1 && bytesPerSample !== 2 && bytesPerSample !== 4)
    throw new Error(`RLE with ${bitsAllocated} bits allocated is not supported`);
  if (frame.length < 64) throw new Error("the RLE header is cut short");
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const segments = view.getUint32(0, true);
  const expected = samplesPerPixel * bytesPerSample;
  if (segments !== expected) throw new Error(`the RLE header lists ${segments} segments; ${expected} were expected`);
  const pixels = rows * columns;
  const planes = new Uint8Array(pixels * expected);
  for (let s = 0; s < segments; s++) {
    const start = view.getUint32(4 + 4 * s, true);
    const end = s + 1 < segments ? view.getUint32(8 + 4 * s, true) : frame.length;
    if (start < 64 || end > frame.length || end < start) throw new Error(`RLE segment ${s + 1} points outside the frame`);
    unpackBits(frame, start, end, planes, s * pixels, pixels);
  }
  if (bytesPerSample === 1) return planes;
  // Several segments per sample, most significant byte first: put each sample's value back together.
  const out = bytesPerSample === 2 ? new Uint16Array(pixels * samplesPerPixel) : new Uint32Array(pixels * samplesPerPixel);
  for (let c = 0; c < samplesPerPixel; c++) {
    const first = bytesPerSample * c * pixels;
    for (let i = 0; i < pixels; i++) {
      let v = 0;
      for (let b = 0; b < bytesPerSample; b++) v = v * 256 + planes[first + b * pixels + i];
      out[c * pixels + i] = v;
    }
  }
  return out;
}

/** PackBits: n in 0..127 copies the next n+1 bytes; n in -127..-1 repeats the next byte 1-n times; -128 is a no-op. */
function unpackBits(src: Uint8Array, pos: number, end: number, out: Uint8Array, at: number, count: number) {
  let o = at;
  const stop = at + count;
  while (pos < end && o < stop) {
    const n = (src[pos++] << 24) >> 24;
    if (n >= 0) {
      const len = Math.min(n + 1, stop - o, end - pos);
      out.set(src.subarray(pos, pos + len), o);
      o += len;
      pos += n + 1;
    } else if (n !== -128) {
      const len = Math.min(1 - n, stop - o);
      out.fill(src[pos++], o, o + len);
      o += len;
    }
  }
  if (o < stop) throw new Error("an RLE segment decodes to fewer bytes than the image needs");
}
