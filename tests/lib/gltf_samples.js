'use strict';
/*
 * gltf_samples.js: where the tests find the Khronos glTF sample models.
 *
 * They live outside the repository. CMake's cache variable
 * RIGD_GLTF_SAMPLES names the folder (tests/CMakeLists.txt) and passes it to
 * every node test as the environment variable of the same name; run by hand
 * without it, the tests look in CMake's default place. A test that needs a
 * sample skips, saying where it looked, when the folder is absent:
 * skipWithoutSamples(t) at its start.
 */
const fs = require('node:fs');
const path = require('node:path');

const GLTF_SAMPLES = process.env.RIGD_GLTF_SAMPLES ||
  path.resolve(__dirname, '..', '..', '..', 'shared', 'gltf-samples');

const samplesPresent = fs.existsSync(GLTF_SAMPLES) && fs.statSync(GLTF_SAMPLES).isDirectory();

/* The .gltf files of the folder, sorted; empty when it is absent. */
const sampleFiles = samplesPresent
  ? fs.readdirSync(GLTF_SAMPLES).filter((f) => f.endsWith('.gltf')).sort()
  : [];

const SKIP_MESSAGE = `glTF samples not found at ${GLTF_SAMPLES}`;

/* Marks test context 't' skipped when the samples are absent; returns true
 * then, so the test can return at once. */
function skipWithoutSamples(t) {
  if (samplesPresent) return false;
  t.skip(SKIP_MESSAGE);
  return true;
}

module.exports = { GLTF_SAMPLES, samplesPresent, sampleFiles, skipWithoutSamples, SKIP_MESSAGE };
