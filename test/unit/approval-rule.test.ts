// The rule of a second pair of eyes (issue 50 item 4) on its own: whom a version answers, and who may approve it.
import { describe, expect, it } from "vitest";
import { answersCaller, approvalRefusal } from "../../src/workspaces/approval-rule.js";
import { approvalView } from "../../src/workspaces/approval.service.js";
import { PermissionDeniedError, ROLES, isAllowed } from "../../src/workspaces/permissions.js";
import type { ModelRow } from "../../src/serving/model-repository.js";

const ana = "00000000-0000-4000-8000-00000000000a";
const ben = "00000000-0000-4000-8000-00000000000b";
const at = new Date("2026-11-29T10:00:00Z");

describe("answersCaller", () => {
  it("off: answers everyone, approved or not", () => {
    expect(answersCaller({ required: false, builderId: ana, approvedAt: null }, ben)).toBe(true);
  });
  it("on: answers the builder before approval and nobody else", () => {
    const state = { required: true, builderId: ana, approvedAt: null };
    expect(answersCaller(state, ana)).toBe(true);
    expect(answersCaller(state, ben)).toBe(false);
  });
  it("on and approved: answers everyone", () => {
    expect(answersCaller({ required: true, builderId: ana, approvedAt: at }, ben)).toBe(true);
  });
});

describe("approvalRefusal", () => {
  const version = { builderId: ana, approvedAt: null };
  it("lets a reviewer or an owner who did not build it approve, and no other role", () => {
    for (const role of ROLES) {
      if (isAllowed(role, "model.approve")) expect(approvalRefusal({ role, userId: ben }, version), role).toBeNull();
      else expect(() => approvalRefusal({ role, userId: ben }, version), role).toThrow(PermissionDeniedError);
    }
    expect(ROLES.filter((r) => isAllowed(r, "model.approve"))).toEqual(["owner", "reviewer"]);
  });
  it("refuses the builder, even an owner: the point is a second pair of eyes", () => {
    expect(approvalRefusal({ role: "owner", userId: ana }, version)).toBe("own_version");
    expect(approvalRefusal({ role: "reviewer", userId: ana }, version)).toBe("own_version");
  });
  it("names the missing permission to a viewer before anything about who built it", () => {
    expect(() => approvalRefusal({ role: "viewer", userId: ana }, version)).toThrow(
      expect.objectContaining({ status: 403, code: "missing_permission_model_approve" }),
    );
  });
  it("refuses a second approval of the same version", () => {
    expect(approvalRefusal({ role: "reviewer", userId: ben }, { builderId: ana, approvedAt: at })).toBe("already_approved");
  });
});

describe("approvalView", () => {
  const row = { version: 3, approvedBy: ben, approvedAt: at, approvedIntendedUse: "triage" } as ModelRow;
  it("shows the approver by e-mail", () => {
    expect(approvalView(row, true, new Map([[ben, "ben@example.org"]]))).toEqual({
      version: 3,
      required: true,
      approved: true,
      approved_by: "ben@example.org",
      former_member: false,
      approved_at: at,
      intended_use: "triage",
    });
  });
  it("an erased approver is a former member, without their e-mail; the approval stands", () => {
    expect(approvalView({ ...row, approvedBy: null }, true, new Map())).toMatchObject({
      approved: true,
      approved_by: null,
      former_member: true,
    });
  });
  it("not approved is not a former member", () => {
    expect(approvalView({ ...row, approvedBy: null, approvedAt: null, approvedIntendedUse: null }, false, new Map())).toMatchObject({
      approved: false,
      former_member: false,
    });
  });
});
