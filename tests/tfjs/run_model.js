// Runs kiln's TensorFlow.js exports with the real TensorFlow.js runtime (pure-JS CPU
// backend) and compares each output with the value kiln computed.
// Usage: node run_model.js CASES.json
// CASES.json: [{"name", "model": dir, "inputs": {arg: tensor}, "expected": {output_i: tensor}}]
// where a tensor is {"dtype", "shape", "values"}.
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');

async function loadModel(dir) {
  const model = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const specs = [];
  const buffers = [];
  for (const group of model.weightsManifest) {
    specs.push(...group.weights);
    for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
  }
  const data = Buffer.concat(buffers);
  const weightData = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const handler = tf.io.fromMemory({
    modelTopology: model.modelTopology, weightSpecs: specs, weightData,
    format: model.format, generatedBy: model.generatedBy, convertedBy: model.convertedBy,
  });
  return {graph: await tf.loadGraphModel(handler), signature: model.signature};
}

function close(got, want, dtype) {
  if (got.length !== want.length) return false;
  for (let i = 0; i < got.length; ++i) {
    const g = Number(got[i]);
    const w = Number(want[i]);
    if (dtype === 'float32') {
      if (Math.abs(g - w) > 1e-4 * (1 + Math.abs(w))) return false;
    } else if (g !== w) {
      return false;
    }
  }
  return true;
}

async function main() {
  const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  tf.setBackend('cpu');
  let failures = 0;
  const cache = {};
  for (const c of cases) {
    const model = cache[c.model] || (cache[c.model] = await loadModel(c.model));
    const feeds = {};
    for (const [arg, t] of Object.entries(c.inputs)) {
      const node = model.signature.inputs[arg].name;
      feeds[node] = tf.tensor(t.values, t.shape, t.dtype);
    }
    const keys = Object.keys(c.expected);
    const names = keys.map((k) => model.signature.outputs[k].name);
    let result;
    try {
      result = await model.graph.executeAsync(feeds, names);
    } catch (e) {
      console.log(`FAIL ${c.name}: tfjs threw ${e.message}`);
      ++failures;
      continue;
    }
    if (!Array.isArray(result)) result = [result];
    keys.forEach((k, i) => {
      const want = c.expected[k];
      const got = result[i];
      const values = Array.from(got.dataSync());
      const shapeOk = JSON.stringify(got.shape) === JSON.stringify(want.shape);
      const dtypeOk = got.dtype === want.dtype;
      if (!shapeOk || !dtypeOk || !close(values, want.values, want.dtype)) {
        console.log(`FAIL ${c.name} ${k}: got ${got.dtype} [${got.shape}] ${JSON.stringify(values.slice(0, 8))}, ` +
                    `kiln ${want.dtype} [${want.shape}] ${JSON.stringify(want.values.slice(0, 8))}`);
        ++failures;
      } else {
        console.log(`ok   ${c.name} ${k}: ${got.dtype} [${got.shape}]`);
      }
    });
  }
  console.log(`${cases.length} cases, ${failures} failures`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
