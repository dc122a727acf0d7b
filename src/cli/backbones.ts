import fs from "node:fs";
import type { Command } from "commander";
import { z } from "zod";
import {
  BackboneInstallError,
  backboneEntrySchema,
  backbonesDir,
  installBackbone,
  installFolder,
  issueProblem,
  listBackbones,
  removeBackbone,
  type InstalledBackbone,
} from "../backbones/store.js";
import { config } from "../config.js";
import { msg } from "../errors.js";

// ./builder backbones install <file | https URL | folder> ... | list | remove <name>   (issue 52; src/backbones/store.ts)

interface InstallOptions {
  sha256?: string;
  name?: string;
  licence?: string;
  source?: string;
  family: string;
  width: string;
  depth: string;
  nativeSide?: string;
}

const line = (b: InstalledBackbone) =>
  `${b.name}  ${b.family}-w${b.width}-d${b.depth} at ${b.native_side} px  sha256 ${b.sha256}  licence: ${b.licence}  source: ${b.source}`;

async function install(source: string, opts: InstallOptions): Promise<InstalledBackbone[]> {
  const dir = backbonesDir(config().dataDir);
  const isFolder = !/^https?:\/\//i.test(source) && (await fs.promises.stat(source).catch(() => null))?.isDirectory();
  if (isFolder) return installFolder(dir, source);
  const parsed = backboneEntrySchema.safeParse({
    name: opts.name,
    sha256: opts.sha256,
    licence: opts.licence,
    source: opts.source ?? source,
    family: opts.family,
    width: Number(opts.width),
    depth: Number(opts.depth),
    native_side: opts.nativeSide === undefined ? undefined : Number(opts.nativeSide),
  });
  if (!parsed.success) {
    const flag = (p: PropertyKey | undefined) => `--${String(p).replace("_", "-")}`;
    const [first, ...rest] = parsed.error.issues.map((i) =>
      msg("backbone.option_problem", { option: flag(i.path[0]), problem: issueProblem(i) }),
    );
    throw new BackboneInstallError(first, ...rest);
  }
  return [await installBackbone(dir, source, parsed.data)];
}

export function registerBackbones(program: Command): void {
  const cmd = program
    .command("backbones")
    .description("pretrained backbones image models fine-tune (pinned by SHA-256, with their licence)");
  cmd
    .command("install")
    .description(
      "install weights from a file, an http(s) URL, or a folder holding the files and a backbones.json that pins each (hosts without internet); the newest install is the one new image models fine-tune",
    )
    .argument("<source>", "a weights file (a state dict of the pipeline's CamNet), an http(s) URL, or a folder")
    .option("--sha256 <hex>", "the SHA-256 the file must have (required for a file or URL)")
    .option("--name <name>", "what the manifest and the model card call it (required for a file or URL)")
    .option("--licence <text>", "the weights' licence, shown to whoever builds a model on them (required for a file or URL)")
    .option("--source <text>", "where the weights come from (default: the file or URL given)")
    .option("--family <family>", "recipe the weights fit: resnet or mobile", "resnet")
    .option("--width <n>", "recipe width", "16")
    .option("--depth <n>", "recipe depth", "1")
    .option("--native-side <px>", "the image side the weights were trained at (required for a file or URL)")
    .action(async (source: string, opts: InstallOptions) => {
      try {
        for (const b of await install(source, opts)) process.stdout.write(`installed ${line(b)}\n`);
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        process.exit(err instanceof BackboneInstallError || err instanceof z.ZodError ? 2 : 1);
      }
    });
  cmd
    .command("list")
    .description("the installed backbones, the one in use last")
    .action(async () => {
      const all = await listBackbones(backbonesDir(config().dataDir));
      process.stdout.write(all.length ? `${all.map(line).join("\n")}\n` : "no backbone installed: image models train from scratch\n");
    });
  cmd
    .command("remove")
    .argument("<name>")
    .description("remove an installed backbone (models already built on it are not changed)")
    .action(async (name: string) => {
      if (!(await removeBackbone(backbonesDir(config().dataDir), name))) {
        process.stderr.write(`error: no backbone named ${name} is installed\n`);
        process.exit(2);
      }
      process.stdout.write(`removed ${name}\n`);
    });
}
