// The independent reference for kvprefix's local mode: HuggingFace's own JavaScript implementation
// (@huggingface/transformers: its AutoTokenizer, its apply_chat_template with tokenize: true) loaded
// from the same local files, never from the network. Written for kvprefix's parity test
// (docs/TOKENIZER.md section 5.1).
//
//   node hf_tokenize.mjs REFERENCE_DIR MODEL_DIR INPUT.jsonl > OUTPUT.jsonl
//
// Each input line is {"kind": "chat", "messages", "tools", "documents", "add_generation_prompt",
// "kwargs"} or {"kind": "completion", "prompt", "add_special_tokens"}; each output line is
// {"ids": [...]} or {"error": "..."}, in the same order.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [referenceDir, modelDir, input] = process.argv.slice(2);
const hf = await import(
    pathToFileURL(join(referenceDir, 'node_modules/@huggingface/transformers/dist/transformers.node.mjs')).href
);
hf.env.allowRemoteModels = false;
hf.env.allowLocalModels = true;
hf.env.useFSCache = false;
hf.env.useBrowserCache = false;
const tokenizer = await hf.AutoTokenizer.from_pretrained(modelDir);

const out = [];
for (const line of readFileSync(input, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const r = JSON.parse(line);
    try {
        let ids;
        if (r.kind === 'chat') {
            ids = tokenizer.apply_chat_template(r.messages, {
                tools: r.tools,
                documents: r.documents,
                add_generation_prompt: r.add_generation_prompt,
                tokenize: true,
                return_tensor: false,
                return_dict: false,
                ...r.kwargs,
            });
        } else {
            ids = tokenizer.encode(r.prompt, { add_special_tokens: r.add_special_tokens });
        }
        out.push(JSON.stringify({ ids: Array.from(ids, Number) }));
    } catch (e) {
        out.push(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
    }
}
process.stdout.write(out.join('\n') + '\n');
