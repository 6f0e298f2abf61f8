// tools/task-store.ts: the session-scoped task list behind the task_* builtins, kept in a small KV
// interface (RecordStore) that the lead adapts to the real Store's records, namespaced per session.
import { randomUUID } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';

/** Minimal key/value records API a task store persists through (one namespace per session). */
export interface RecordStore {
  get<T>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
  /** Every record in this namespace (in no particular order). */
  list<T>(): Promise<Array<{ key: string; value: T }>>;
}

/** An in-memory RecordStore for tests and ephemeral sessions. Values are copied in and out. */
export function createMemoryRecordStore(): RecordStore {
  const map = new Map<string, unknown>();
  return {
    async get<T>(key: string) {
      return map.has(key) ? (structuredClone(map.get(key)) as T) : undefined;
    },
    async put(key, value) {
      map.set(key, structuredClone(value));
    },
    async list<T>() {
      return [...map].map(([key, value]) => ({ key, value: structuredClone(value) as T }));
    },
  };
}

/** Task lifecycle status. */
const TaskStatus = Type.Enum(['pending', 'in_progress', 'completed']);
type TaskStatus = Static<typeof TaskStatus>;
/** Task priority; `medium` when not given. */
const TaskPriority = Type.Enum(['low', 'medium', 'high']);
type TaskPriority = Static<typeof TaskPriority>;

const Metadata = Type.Unsafe<Record<string, unknown>>({ type: 'object' });
const Ids = (description: string) => Type.Array(Type.String({ minLength: 1 }), { description });

/** A task as returned to the model (timestamps are RFC 3339). */
export const Task = Type.Object({
  id: Type.String(),
  subject: Type.String(),
  description: Type.String(),
  status: TaskStatus,
  priority: TaskPriority,
  labels: Type.Array(Type.String()),
  blocks: Type.Array(Type.String()),
  blocked_by: Type.Array(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
  owner: Type.Optional(Type.String()),
  metadata: Metadata,
});
export type Task = Static<typeof Task>;

/** Persisted form: versioned envelope, validated on read. */
const TaskRecord = Type.Object({ v: Type.Literal(1), task: Task });
type TaskRecord = Static<typeof TaskRecord>;
const checkRecord = Compile(TaskRecord);

/** Arguments of task_create (also its input_schema). */
export const TaskCreateInput = Type.Object(
  {
    subject: Type.String({ minLength: 1, description: 'Short title of the task.' }),
    description: Type.String({ description: 'What needs to be done.' }),
    priority: Type.Optional(Type.Enum(['low', 'medium', 'high'], { description: 'Defaults to medium.' })),
    labels: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    blocks: Type.Optional(Ids('Ids of existing tasks this task blocks.')),
    blocked_by: Type.Optional(Ids('Ids of existing tasks that block this task.')),
    owner: Type.Optional(Type.String({ minLength: 1 })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type TaskCreateInput = Static<typeof TaskCreateInput>;

/** Arguments of task_update (also its input_schema). */
export const TaskUpdateInput = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    subject: Type.Optional(Type.String({ minLength: 1 })),
    description: Type.Optional(Type.String()),
    status: Type.Optional(TaskStatus),
    priority: Type.Optional(TaskPriority),
    labels: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Replaces the labels.' })),
    owner: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'null clears the owner.' })),
    metadata: Type.Optional(
      Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'Merged into the metadata; a null value removes that key.' }),
    ),
    add_blocks: Type.Optional(Ids('Task ids this task now blocks.')),
    remove_blocks: Type.Optional(Ids('Task ids this task no longer blocks.')),
    add_blocked_by: Type.Optional(Ids('Task ids that now block this task.')),
    remove_blocked_by: Type.Optional(Ids('Task ids that no longer block this task.')),
  },
  { additionalProperties: false },
);
export type TaskUpdateInput = Static<typeof TaskUpdateInput>;

/** Arguments of task_list (also its input_schema): the filter for TaskStore.list. */
export const TaskListInput = Type.Object(
  {
    status: Type.Optional(TaskStatus),
    labels: Type.Optional(Type.Array(Type.String(), { description: 'Only tasks carrying all of these labels.' })),
  },
  { additionalProperties: false },
);
export type TaskListInput = Static<typeof TaskListInput>;

/** An expected failure (unknown id, bad relation) to report to the model, not a crash. */
export class TaskStoreError extends Error {
  readonly kind: 'not_found' | 'invalid';
  constructor(kind: 'not_found' | 'invalid', message: string) {
    super(message);
    this.name = 'TaskStoreError';
    this.kind = kind;
  }
}

const PREFIX = 'task/';
const uniq = (xs: readonly string[]): string[] => [...new Set(xs)];

/**
 * Task CRUD over a RecordStore. `blocks`/`blocked_by` are kept symmetric: when A blocks B, B lists A in
 * `blocked_by`. Operations run one at a time, because the tool loop may dispatch several task calls at once.
 */
export class TaskStore {
  readonly #records: RecordStore;
  readonly #clock: () => Date;
  readonly #newId: () => string;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(records: RecordStore, options: { clock?: () => Date; newId?: () => string } = {}) {
    this.#records = records;
    this.#clock = options.clock ?? (() => new Date());
    this.#newId = options.newId ?? randomUUID;
  }

  create(input: TaskCreateInput): Promise<Task> {
    return this.#exclusive(async () => {
      const now = this.#clock().toISOString();
      const task: Task = {
        id: this.#newId(),
        subject: input.subject,
        description: input.description,
        status: 'pending',
        priority: input.priority ?? 'medium',
        labels: uniq(input.labels ?? []),
        blocks: [],
        blocked_by: [],
        created_at: now,
        updated_at: now,
        ...(input.owner === undefined ? {} : { owner: input.owner }),
        metadata: input.metadata ?? {},
      };
      const changed = new Map<string, Task>([[task.id, task]]);
      await this.#link(changed, task, input.blocks ?? [], input.blocked_by ?? [], now);
      await this.#save(changed);
      return task;
    });
  }

  get(id: string): Promise<Task | undefined> {
    return this.#exclusive(() => this.#read(id));
  }

  list(filter: TaskListInput = {}): Promise<Task[]> {
    return this.#exclusive(async () => {
      const rows = await this.#records.list<unknown>();
      const tasks = rows.filter((r) => r.key.startsWith(PREFIX)).map((r) => decode(r.key, r.value));
      return tasks
        .filter((t) => filter.status === undefined || t.status === filter.status)
        .filter((t) => (filter.labels ?? []).every((l) => t.labels.includes(l)))
        .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    });
  }

  update(input: TaskUpdateInput): Promise<Task> {
    return this.#exclusive(async () => {
      const task = await this.#read(input.id);
      if (task === undefined) throw new TaskStoreError('not_found', `task not found: ${input.id}`);
      for (const [add, remove, name] of [
        [input.add_blocks, input.remove_blocks, 'blocks'],
        [input.add_blocked_by, input.remove_blocked_by, 'blocked_by'],
      ] as const) {
        const both = (add ?? []).filter((id) => (remove ?? []).includes(id));
        if (both.length > 0) throw new TaskStoreError('invalid', `task ${both[0]} is in both add_${name} and remove_${name}`);
      }
      const now = this.#clock().toISOString();
      if (input.subject !== undefined) task.subject = input.subject;
      if (input.description !== undefined) task.description = input.description;
      if (input.status !== undefined) task.status = input.status;
      if (input.priority !== undefined) task.priority = input.priority;
      if (input.labels !== undefined) task.labels = uniq(input.labels);
      if (input.owner === null) delete task.owner;
      else if (input.owner !== undefined) task.owner = input.owner;
      if (input.metadata !== undefined) task.metadata = mergeMetadata(task.metadata, input.metadata);
      task.updated_at = now;
      const changed = new Map<string, Task>([[task.id, task]]);
      await this.#unlink(changed, task, input.remove_blocks ?? [], input.remove_blocked_by ?? [], now);
      await this.#link(changed, task, input.add_blocks ?? [], input.add_blocked_by ?? [], now);
      await this.#save(changed);
      return task;
    });
  }

  /** Adds `task` blocks→ids and ids→task edges, on both ends. Unknown ids or self-links are errors. */
  async #link(changed: Map<string, Task>, task: Task, blocks: readonly string[], blockedBy: readonly string[], now: string): Promise<void> {
    for (const [ids, mine, theirs] of [
      [blocks, 'blocks', 'blocked_by'],
      [blockedBy, 'blocked_by', 'blocks'],
    ] as const) {
      for (const id of uniq(ids)) {
        if (id === task.id)
          throw new TaskStoreError('invalid', `task ${id} cannot ${mine === 'blocks' ? 'block' : 'be blocked by'} itself`);
        const other = changed.get(id) ?? (await this.#read(id));
        if (other === undefined) throw new TaskStoreError('not_found', `task not found: ${id}`);
        task[mine] = uniq([...task[mine], id]);
        other[theirs] = uniq([...other[theirs], task.id]);
        other.updated_at = now;
        changed.set(id, other);
      }
    }
  }

  /** Removes edges on both ends; an id that no longer exists is simply dropped from `task`. */
  async #unlink(
    changed: Map<string, Task>,
    task: Task,
    blocks: readonly string[],
    blockedBy: readonly string[],
    now: string,
  ): Promise<void> {
    for (const [ids, mine, theirs] of [
      [blocks, 'blocks', 'blocked_by'],
      [blockedBy, 'blocked_by', 'blocks'],
    ] as const) {
      for (const id of uniq(ids)) {
        task[mine] = task[mine].filter((x) => x !== id);
        const other = changed.get(id) ?? (await this.#read(id));
        if (other === undefined || id === task.id) continue;
        other[theirs] = other[theirs].filter((x) => x !== task.id);
        other.updated_at = now;
        changed.set(id, other);
      }
    }
  }

  async #read(id: string): Promise<Task | undefined> {
    const key = PREFIX + id;
    const raw = await this.#records.get<unknown>(key);
    return raw === undefined ? undefined : decode(key, raw);
  }

  async #save(changed: Map<string, Task>): Promise<void> {
    for (const task of changed.values()) {
      const record: TaskRecord = { v: 1, task };
      await this.#records.put(PREFIX + task.id, record);
    }
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn);
    this.#tail = run.catch(() => undefined);
    return run;
  }
}

function decode(key: string, raw: unknown): Task {
  if (!checkRecord.Check(raw)) throw new Error(`corrupt task record at ${key}`);
  return (raw as TaskRecord).task;
}

function mergeMetadata(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const next = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  return next;
}
