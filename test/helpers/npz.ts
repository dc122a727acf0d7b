import yauzl from "yauzl";

/** The uint8 arrays of an .npz (a zip of .npy files; uint8 only, which is what MedMNIST holds). */
export async function readNpz(file: string): Promise<Record<string, { shape: number[]; data: Buffer }>> {
  const zip = await new Promise<yauzl.ZipFile>((res, rej) => yauzl.open(file, { lazyEntries: true }, (e, z) => (e ? rej(e) : res(z!))));
  const out: Record<string, { shape: number[]; data: Buffer }> = {};
  await new Promise<void>((resolve, reject) => {
    zip.on("entry", (entry: yauzl.Entry) => {
      zip.openReadStream(entry, async (err, s) => {
        if (err || !s) return reject(err);
        const chunks: Buffer[] = [];
        for await (const c of s) chunks.push(c as Buffer);
        const buf = Buffer.concat(chunks);
        const headerLen = buf.readUInt16LE(8);
        const header = buf.subarray(10, 10 + headerLen).toString("latin1");
        if (!header.includes("'|u1'")) return reject(new Error(`${entry.fileName}: not uint8`));
        const shape = header
          .match(/'shape': \(([^)]*)\)/)![1]
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean)
          .map(Number);
        out[entry.fileName.replace(/\.npy$/, "")] = { shape, data: buf.subarray(10 + headerLen) };
        zip.readEntry();
      });
    });
    zip.on("end", resolve);
    zip.on("error", reject);
    zip.readEntry();
  });
  return out;
}
