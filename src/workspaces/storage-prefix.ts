// A workspace's objects live under one prefix: a personal workspace keeps its owner's user id (the seed's
// `<user_id>/...` layout, so nothing moves at the upgrade); a shared workspace uses its own id.
export function workspaceStoragePrefix(w: { id: string; personalOwnerId: string | null }): string {
  return w.personalOwnerId ?? w.id;
}
