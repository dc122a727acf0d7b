import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/**
 * A real PACS for the tests: Debian's Orthanc with its DICOMweb plugin (packages `orthanc`, `orthanc-dicomweb`;
 * .ci/run installs them), on a free loopback port, with its own storage folder and configuration, and HTTP basic
 * authentication on as a hospital turns it on (RegisteredUsers). The DICOM port is off: the tests speak DICOMweb
 * (WADO-RS, QIDO-RS, STOW-RS) and Orthanc's REST API only.
 */

const BINARIES = ["/usr/sbin/Orthanc", "/usr/bin/Orthanc"];
const PLUGIN = "/usr/share/orthanc/plugins/libOrthancDicomWeb.so";
const binary = BINARIES.find((b) => fs.existsSync(b));

export const haveOrthanc = Boolean(binary) && fs.existsSync(PLUGIN);

export interface StoredInstance {
  study: string;
  series: string;
  instance: string;
  /** Orthanc's own id of the instance (its REST API's /instances/{id}). */
  orthancId: string;
  /** The WADO-RS URL of the instance. */
  url: string;
}

export interface TestOrthanc {
  /** http://127.0.0.1:<port> (Orthanc's REST API). */
  url: string;
  /** The DICOMweb root, http://127.0.0.1:<port>/dicom-web (no trailing slash). */
  dicomWeb: string;
  username: string;
  password: string;
  /** Orthanc's REST API with the credentials. */
  rest(pathname: string, init?: RequestInit): Promise<Response>;
  /** Stores a Part 10 file (POST /instances) and answers its UIDs and WADO-RS URL. */
  store(bytes: Buffer): Promise<StoredInstance>;
  /** The Part 10 files of every instance of a study, as Orthanc stored them. */
  studyFiles(study: string): Promise<{ orthancId: string; sopClass: string; bytes: Buffer }[]>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts an Orthanc; a port taken between choosing it and Orthanc binding it is retried on another. */
export async function startOrthanc(opts: { username?: string; password?: string } = {}): Promise<TestOrthanc> {
  if (!binary) throw new Error("Orthanc is not installed (apt-get install orthanc orthanc-dicomweb)");
  const username = opts.username ?? "radiology";
  const password = opts.password ?? "pacs-test-password";
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-orthanc-"));
    const port = await freePort();
    try {
      return await launch(dir, port, username, password);
    } catch (err) {
      lastError = err;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  throw lastError;
}

async function launch(dir: string, port: number, username: string, password: string): Promise<TestOrthanc> {
  const storage = path.join(dir, "storage");
  fs.mkdirSync(storage);
  const config = {
    Name: "BuilderTestPACS",
    StorageDirectory: storage,
    IndexDirectory: storage,
    HttpPort: port,
    HttpServerEnabled: true,
    RemoteAccessAllowed: false,
    DicomServerEnabled: false,
    AuthenticationEnabled: true,
    RegisteredUsers: { [username]: password },
    Plugins: [PLUGIN],
    DicomWeb: { Enable: true, Root: "/dicom-web/" },
    // No metrics, no Lua, no file-system writes through the API: only what the tests use.
    MetricsEnabled: false,
    ExecuteLuaEnabled: false,
  };
  const configFile = path.join(dir, "orthanc.json");
  fs.writeFileSync(configFile, JSON.stringify(config));
  const logFile = path.join(dir, "orthanc.log");
  const log = fs.openSync(logFile, "a");
  const child: ChildProcess = spawn(binary!, [configFile], { stdio: ["ignore", log, log] });
  fs.closeSync(log);
  let exited = false;
  child.once("exit", () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  const authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  const rest = (pathname: string, init: RequestInit = {}) =>
    fetch(`${url}${pathname}`, { ...init, headers: { authorization, ...(init.headers as Record<string, string>) } });

  const stop = async () => {
    if (!exited) {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await gone;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };

  // Ready when the REST API answers with the credentials (Orthanc starts in well under a second here).
  for (let i = 0; ; i++) {
    if (exited) throw new Error(`Orthanc exited at start-up: ${fs.readFileSync(logFile, "utf8").slice(-2000)}`);
    try {
      if ((await rest("/system")).ok) break;
    } catch {
      /* not listening yet */
    }
    if (i > 300) {
      await stop();
      throw new Error(`Orthanc did not answer on port ${port} within 30 s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const dicomWeb = `${url}/dicom-web`;
  return {
    url,
    dicomWeb,
    username,
    password,
    rest,
    async store(bytes) {
      const res = await rest("/instances", {
        method: "POST",
        body: new Uint8Array(bytes),
        headers: { "content-type": "application/dicom" },
      });
      if (!res.ok) throw new Error(`Orthanc refused the instance: HTTP ${res.status} ${await res.text()}`);
      const { ID } = (await res.json()) as { ID: string };
      const tags = (await (await rest(`/instances/${ID}/simplified-tags`)).json()) as Record<string, string>;
      const [study, series, instance] = [tags.StudyInstanceUID, tags.SeriesInstanceUID, tags.SOPInstanceUID];
      return { study, series, instance, orthancId: ID, url: `${dicomWeb}/studies/${study}/series/${series}/instances/${instance}` };
    },
    async studyFiles(study) {
      const found = (await (
        await rest("/tools/find", { method: "POST", body: JSON.stringify({ Level: "Instance", Query: { StudyInstanceUID: study } }) })
      ).json()) as string[];
      return Promise.all(
        found.map(async (id) => {
          const bytes = Buffer.from(await (await rest(`/instances/${id}/file`)).arrayBuffer());
          const tags = (await (await rest(`/instances/${id}/simplified-tags`)).json()) as Record<string, string>;
          return { orthancId: id, sopClass: tags.SOPClassUID, bytes };
        }),
      );
    },
    stop,
  };
}
