/**
 * What the grey-file check (94bec32: a sharp.metadata() header read per sharp-decoded image, src/serving/preprocess.ts)
 * costs decodeImage, in-process: a 512×384 colour JPEG, the same as a colour PNG and as a grey PNG, each decoded N
 * times after a warm-up; prints the median and the 10th/90th percentiles per image, one JSON line. Run it in two
 * trees (bench/serve/decode-grey-ab.sh) to compare.
 *
 *   npx tsx bench/serve/decode-grey.ts [--n 400] [--label x]
 */
import sharp from "sharp";
import { decodeImage } from "../../src/serving/preprocess.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const N = Number(opt("n", "400"));
const LABEL = opt("label", "");

async function main() {
  // A smooth colour picture with some noise (so that the codecs have real work), 512×384 like the HTTP bench's photo.
  const w = 512;
  const h = 384;
  const rgb = Buffer.alloc(w * h * 3);
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 24;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      rgb[i] = (x / 2 + rnd()) & 255;
      rgb[i + 1] = (y / 2 + rnd()) & 255;
      rgb[i + 2] = ((x + y) / 4 + rnd()) & 255;
    }
  const raw = { raw: { width: w, height: h, channels: 3 as const } };
  const images = {
    jpeg: await sharp(rgb, raw).jpeg({ quality: 90 }).toBuffer(),
    png: await sharp(rgb, raw).png().toBuffer(),
    grey_png: await sharp(rgb, raw).toColourspace("b-w").png().toBuffer(),
  };
  const results: Record<string, { median: number; p10: number; p90: number; channels: number }> = {};
  for (const [name, bytes] of Object.entries(images)) {
    let channels = 0;
    for (let i = 0; i < 30; i++) channels = (await decodeImage(bytes, 1e8)).channels;
    const ms: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await decodeImage(bytes, 1e8);
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))];
    results[name] = { median: q(0.5), p10: q(0.1), p90: q(0.9), channels };
    console.error(
      `${LABEL} ${name}: median ${q(0.5).toFixed(3)} ms (p10 ${q(0.1).toFixed(3)}, p90 ${q(0.9).toFixed(3)}), ${channels} channel(s)`,
    );
  }
  console.log(JSON.stringify({ label: LABEL, at: new Date().toISOString(), results }));
}

void main();
