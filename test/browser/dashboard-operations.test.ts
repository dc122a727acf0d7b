import { spawn, type ChildProcess } from "node:child_process";
import { Readable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queueName, redisConnection } from "../../src/jobs/queues.js";
import { createUserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { imageZip, ROOT } from "../integration/cluster-fixtures.js";
import { api, dataRequest, tabularZip, visionRequest, waitFor, waitForStatus, type Api } from "../integration/experiments-fixtures.js";
import {
  axeViolations,
  ensureDashboardBuilt,
  haveChromium,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signInThroughPage,
} from "./browser.js";

// The Operations page (issue 54 item 2) in a real Chromium, against a real Builder in BUILDER_RUNNER=bullmq on the
// real Postgres and Redis, with two real `./builder worker` processes (one declaring a simulated 80 GB GPU, one
// CPU-only) and a real table experiment training: the administrator sees both workers with their slots and the
// running job, drains the worker running it with the button (it finishes the job, then shows drained), resumes it,
// and reads the page in Spanish.

const ADMIN = { email: "it@hospital.example", password: "the IT department's password" };
const hasServices = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

describe.skipIf(!haveChromium || !hasServices)("dashboard: Operations (Chromium, real workers)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let member: Api;
  let userId: string;
  const workers: ChildProcess[] = [];
  const queue = `ops-page-${Date.now()}-${process.pid}`;
  const env = () => ({
    ...process.env,
    DATABASE_URL: server.services.config.DATABASE_URL!,
    BUILDER_DATA_DIR: server.dataDir,
    REDIS_URL: process.env.TEST_REDIS_URL!,
    BULLMQ_QUEUE: queue,
    JOB_LEASE_S: "3",
    LOG_LEVEL: "warn",
    CUDA_VISIBLE_DEVICES: "",
  });
  const startWorker = (args: string[]) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "worker", ...args], {
      cwd: ROOT,
      env: env(),
      stdio: "ignore",
    });
    workers.push(child);
    return child;
  };

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("postgres", {
      BUILDER_RUNNER: "bullmq",
      REDIS_URL: process.env.TEST_REDIS_URL!,
      BULLMQ_QUEUE: queue,
      JOB_LEASE_S: "3",
    });
    await server.services.auth.users.create({ ...ADMIN, role: "admin" });
    const user = await createUserWithKey(server, { email: "radiologia@hospital.example" });
    userId = user.userId;
    member = api(server.url, user.key);
    startWorker(["--simulate-gpus", "1x80GB"]);
    startWorker([]);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 180_000);

  afterAll(async () => {
    for (const w of workers) w.kill("SIGKILL");
    await browser?.close();
    await server?.teardown();
    const redis = redisConnection(process.env.TEST_REDIS_URL!);
    const keys = [
      ...(await redis.keys(`bull:${queueName(queue, "gpu")}:*`)),
      ...(await redis.keys(`bull:${queueName(queue, "cpu")}:*`)),
      `builder:${queue}:workers`,
      `builder:${queue}:drain`,
    ];
    await redis.del(...keys);
    await redis.quit();
  });

  it("shows each worker with its GPUs and slots, the queues, and the running job", async () => {
    await server.services.bucket.write(`${userId}/images/data.zip`, Readable.from(await imageZip()));
    await signInThroughPage(page, server.url, ADMIN.email, ADMIN.password);
    await page.getByRole("link", { name: "Operations" }).click();
    await page.getByRole("heading", { name: "Operations", level: 1 }).waitFor();
    const table = page.getByRole("table", { name: "Workers" });
    await waitFor("both workers on the page", async () => (await table.locator("tbody tr").count()) === 2, 90_000, 300);
    expect(await page.getByTestId("runner").textContent()).toContain("./builder worker");
    const gpuRow = page.getByTestId(`worker-${workers[0].pid}`);
    expect(await gpuRow.textContent()).toMatch(/GPU 0: simulated GPU, 80 GiB \(simulated: trains on the CPU\)/);
    expect(await page.getByTestId(`worker-${workers[1].pid}`).textContent()).toContain("none (CPU only)");

    // An image model trains until its time budget is spent: long enough to look at the page and drain its worker.
    const post = await member.post("/v1/experiments", visionRequest(userId, 1, `${userId}/images/data.zip`, { time_budget_s: 40 }));
    expect(post.status).toBe(202);
    await waitFor(
      "#1 in the GPU slot",
      async () => /GPU 0: #1 of radiologia@hospital\.example/.test((await gpuRow.textContent()) ?? ""),
      60_000,
      300,
    );
    const running = page.getByRole("table", { name: "Running jobs" });
    expect(await running.textContent()).toMatch(/#1 of radiologia@hospital\.example.*image classification/);
    expect(await page.getByTestId("queue-gpu").textContent()).toContain("1 running");
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "operations-01-running");
  }, 180_000);

  it("Drain: the GPU worker finishes its job and takes nothing new; the next job runs elsewhere; Resume: it takes jobs again", async () => {
    const gpuPid = workers[0].pid!;
    const row = page.getByTestId(`worker-${gpuPid}`);
    const host = (await row.locator("td").first().textContent())!.split(" ")[0];
    await page.getByRole("button", { name: `Drain ${host} (process ${gpuPid})` }).click();
    await waitFor("draining", async () => /draining/.test((await row.textContent()) ?? ""), 15_000, 200);
    expect(await row.textContent()).toContain("#1 of"); // it goes on with the job it runs
    await screenshot(page, "operations-02-draining");

    // A table now: the draining worker has a free CPU slot, but takes nothing new: the CPU-only worker runs it.
    const data = tabularZip();
    await server.services.bucket.write(`${userId}/tabular/data.zip`, Readable.from(data.zip));
    expect((await member.post("/v1/experiments", dataRequest(userId, 2, `${userId}/tabular/data.zip`, data.dataCols))).status).toBe(202);
    expect((await waitForStatus(member, 2, ["ready", "failed", "invalid_dataset", "cancelled"], 120_000)).status).toBe("ready");
    const cpuId = (await row.page().getByTestId(`worker-${workers[1].pid}`).locator("code").textContent())!;
    expect((await member.get("/v1/experiments/2/logs")).body).toContain(`on runner ${cpuId}`);

    expect((await waitForStatus(member, 1, ["ready", "failed", "invalid_dataset", "cancelled"], 180_000)).status).toBe("ready");
    await waitFor("drained once its job ended", async () => /drained/.test((await row.textContent()) ?? ""), 30_000, 300);
    await screenshot(page, "operations-03-drained");

    await page.getByRole("button", { name: `Resume ${host} (process ${gpuPid})` }).click();
    await waitFor("active again", async () => /active/.test((await row.textContent()) ?? ""), 15_000, 200);
    const activity = await (await fetch(`${server.url}/v1/audit`, { headers: { cookie: await cookieOf(page) } })).json();
    expect(activity.data.map((e: { action: string }) => e.action)).toEqual(
      expect.arrayContaining(["worker_drain_requested", "worker_resumed"]),
    );
  }, 300_000);

  it("reads in Spanish", async () => {
    // The Account page's choice, as the dashboard stores it.
    await page.evaluate(() => localStorage.setItem("builder.language", "es"));
    await page.reload();
    await page.getByRole("heading", { name: "Operaciones", level: 1 }).waitFor();
    await page.getByRole("table", { name: "Workers" }).waitFor();
    expect(await page.getByTestId(`worker-${workers[1].pid}`).textContent()).toContain("ninguna (solo CPU)");
    expect(await page.getByTestId("queue-gpu").textContent()).toContain("Trabajos que necesitan una GPU");
    expect(await page.getByRole("button", { name: /^Vaciar / }).count()).toBe(2);
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "operations-04-spanish");
  });
});

async function cookieOf(page: Page): Promise<string> {
  return (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
}
