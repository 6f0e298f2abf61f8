// tools/task-tools.ts: the task_create / task_get / task_list / task_update builtins over a
// session's TaskStore. Built by tools/registry.ts when builtins are enabled.
import { Type } from 'typebox';
import { compileArgs, invalidArgs, jsonResult, type ToolArgs } from './tool-args.ts';
import type { Tool, ToolOutcome } from './tool.ts';
import { TaskCreateInput, TaskListInput, TaskStoreError, TaskUpdateInput, type TaskStore } from './task-store.ts';

const TaskGetInput = Type.Object({ id: Type.String({ minLength: 1 }) }, { additionalProperties: false });

/** Builds one tool: validates the arguments, runs `run`, maps TaskStoreError to an is_error result. */
function taskTool<T>(name: string, description: string, args: ToolArgs<T>, run: (value: T) => Promise<ToolOutcome>): Tool {
  return {
    name,
    description,
    input_schema: args.jsonSchema,
    async execute(raw) {
      const parsed = args.parse(raw);
      if (!parsed.ok) return invalidArgs(name, parsed.message);
      try {
        return await run(parsed.value);
      } catch (err) {
        if (err instanceof TaskStoreError) return { content: err.message, is_error: true };
        throw err;
      }
    },
  };
}

/** The four task tools, sharing one store. Results are JSON text: a Task, or `{tasks: Task[]}` for list. */
export function createTaskTools(store: TaskStore): Tool[] {
  return [
    taskTool(
      'task_create',
      "Create a task in this session's task list. New tasks start as pending. Returns the created task.",
      compileArgs(TaskCreateInput),
      async (input) => jsonResult(await store.create(input)),
    ),
    taskTool('task_get', 'Get one task by id.', compileArgs(TaskGetInput), async ({ id }) => {
      const task = await store.get(id);
      return task === undefined ? { content: `task not found: ${id}`, is_error: true } : jsonResult(task);
    }),
    taskTool(
      'task_list',
      'List tasks, oldest first, optionally filtered by status and labels.',
      compileArgs(TaskListInput),
      async (filter) => jsonResult({ tasks: await store.list(filter) }),
    ),
    taskTool(
      'task_update',
      'Update a task: change fields or status (pending, in_progress, completed) and add or remove blocking links. Returns the updated task.',
      compileArgs(TaskUpdateInput),
      async (input) => jsonResult(await store.update(input)),
    ),
  ];
}
