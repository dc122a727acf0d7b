import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ApiError, say } from "../../src/errors.js";
import {
  PERMISSIONS,
  PermissionDeniedError,
  ROLES,
  ROLE_PERMISSIONS,
  assertAllowed,
  isAllowed,
  isRole,
} from "../../src/workspaces/permissions.js";

describe("workspace permissions table", () => {
  it("gives an owner every permission", () => {
    for (const p of PERMISSIONS) expect(isAllowed("owner", p), p).toBe(true);
  });

  it("keeps a viewer to reading", () => {
    expect([...ROLE_PERMISSIONS.viewer]).toEqual(["experiment.read"]);
  });

  it("lets an editor build and delete but not manage members, keys, approvals or the workspace", () => {
    for (const p of ["experiment.build", "experiment.delete", "dataset.upload", "batch.run", "operating_point.set"] as const)
      expect(isAllowed("editor", p), p).toBe(true);
    for (const p of ["members.manage", "key.manage", "model.approve", "workspace.delete"] as const)
      expect(isAllowed("editor", p), p).toBe(false);
  });

  it("lets a reviewer approve and write the intended use but not build or delete", () => {
    for (const p of ["model.approve", "intended_use.write", "review.write", "experiment.read"] as const)
      expect(isAllowed("reviewer", p), p).toBe(true);
    for (const p of ["experiment.build", "experiment.delete", "dataset.upload", "members.manage"] as const)
      expect(isAllowed("reviewer", p), p).toBe(false);
  });

  it("orders the roles: each lower role's permissions are within the owner's, and a viewer's within every role's", () => {
    for (const role of ROLES) {
      for (const p of ROLE_PERMISSIONS.viewer) expect(ROLE_PERMISSIONS[role].has(p), `${role} ${p}`).toBe(true);
      for (const p of ROLE_PERMISSIONS[role]) expect(ROLE_PERMISSIONS.owner.has(p)).toBe(true);
    }
  });

  it("throws a 403 whose code names the missing permission", () => {
    let caught: unknown;
    try {
      assertAllowed({ role: "viewer" }, "experiment.delete");
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(PermissionDeniedError);
    expect(caught).toBeInstanceOf(ApiError);
    const err = caught as PermissionDeniedError;
    expect(err.status).toBe(403);
    expect(err.code).toBe("missing_permission_experiment_delete");
    expect(err.permission).toBe("experiment.delete");
    // Said in words a clinician reads, not the code's names (the code and details keep those).
    expect(err.message).toContain("your role in this workspace (viewer) does not allow deleting experiments");
    expect(say(err.text!, "es")).toContain("su rol en este espacio de trabajo (lector) no permite eliminar experimentos");
    expect(() => assertAllowed({ role: "owner" }, "experiment.delete")).not.toThrow();
  });

  it("recognises only the four roles", () => {
    expect(ROLES.every(isRole)).toBe(true);
    expect(isRole("admin")).toBe(false);
    expect(isRole(undefined)).toBe(false);
  });

  // The permissions walk (test/integration/permissions-walk.test.ts) checks every route against ROLE_PERMISSIONS; this
  // keeps the table people read (docs/teams.md) the same as the one the code enforces.
  it("docs/teams.md's table of permissions is ROLE_PERMISSIONS, row for row", () => {
    const doc = fs.readFileSync(new URL("../../docs/teams.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("## The table of permissions"), doc.indexOf("## Key scopes"));
    const rows = section
      .split("\n")
      // Cells may be padded (a Markdown formatter aligns the columns).
      .filter((l) => /^\| [a-z_]+\.[a-z_]+ +\|/.test(l))
      .map((l) =>
        l
          .split("|")
          .slice(1, -1)
          .map((c) => c.trim()),
      );
    expect(rows.map((r) => r[0])).toEqual([...PERMISSIONS]);
    for (const [permission, ...marks] of rows) {
      ROLES.forEach((role, i) =>
        expect(marks[i] === "✓", `${permission} for ${role}`).toBe(isAllowed(role, permission as (typeof PERMISSIONS)[number])),
      );
    }
  });
});
