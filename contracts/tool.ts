// contracts/tool.ts: the declaration of an agent tool as offered to a model. tools/ implements tools
// against it; providers/ maps it onto each vendor's tool format.

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  input_schema: Record<string, unknown>;
}
