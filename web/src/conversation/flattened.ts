import { isObj, type Obj } from './messages.js';

/**
 * Messages sent as flattened span attributes and stored that way (a producer that copied its
 * attributes into the input): OpenInference's `llm.input_messages.0.message.role`, ...
 * (`.message.tool_calls.0.tool_call.function.name`, `.message.contents.0.message_content.text`) and the
 * older GenAI conventions' `gen_ai.prompt.0.role` / `gen_ai.completion.0.content`. Also read when the
 * same keys come nested (`{"llm": {"input_messages": [...]}}`).
 */

type Sides = { input: unknown[] | undefined; output: unknown[] | undefined };
export type Flattened = { openinference?: Sides; genai?: Sides };

const FLAT_KEY = /^(llm\.(input|output)_messages|gen_ai\.(prompt|completion))\.\d+\./;

/** `{"a.0.b": 1}` → `{a: [{b: 1}]}`: objects whose keys are all indexes become arrays, in index order. */
function build(value: Obj): Obj {
  const root: Obj = {};
  for (const [key, v] of Object.entries(value)) {
    const path = key.split('.');
    let node = root;
    path.forEach((seg, i) => {
      if (i === path.length - 1) {
        node[seg] = v;
        return;
      }
      if (!isObj(node[seg])) node[seg] = {};
      node = node[seg] as Obj;
    });
  }
  return arrays(root) as Obj;
}

function arrays(v: unknown): unknown {
  if (!isObj(v)) return v;
  const keys = Object.keys(v);
  const out = Object.fromEntries(keys.map((k) => [k, arrays(v[k])]));
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k)))
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => out[k]);
  return out;
}

const list = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);

export function unflatten(value: Obj): Flattened | null {
  const flat = Object.keys(value).some((k) => FLAT_KEY.test(k));
  const nested = isObj(value.llm) || isObj(value.gen_ai);
  if (!flat && !nested) return null;
  const tree = flat ? build(value) : value;
  const llm = isObj(tree.llm) ? tree.llm : null;
  const genai = isObj(tree.gen_ai) ? tree.gen_ai : null;
  if (llm && (list(llm.input_messages) || list(llm.output_messages)))
    return { openinference: { input: list(llm.input_messages), output: list(llm.output_messages) } };
  if (genai && (list(genai.prompt) || list(genai.completion)))
    return { genai: { input: list(genai.prompt), output: list(genai.completion) } };
  return null;
}
