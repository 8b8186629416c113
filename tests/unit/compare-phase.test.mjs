import { test } from 'node:test';
import assert from 'node:assert/strict';
import { phaseChoices } from '../../www/js/views/compare.js';

test('a diffusion pair can compare its denoising steps; LLM pairs keep prefill and decode', () => {
  const diffusion = { phases: [{ phase: 'denoise' }, { phase: 'stage' }] };
  const llm = { phases: [{ phase: 'prefill' }, { phase: 'decode' }] };
  assert.deepEqual(phaseChoices(diffusion, diffusion, 'all'), ['all', 'prefill', 'decode', 'denoise', 'stage']);
  assert.deepEqual(phaseChoices(llm, llm, 'all'), ['all', 'prefill', 'decode']);
  assert.deepEqual(phaseChoices(llm, diffusion, 'denoise'), ['all', 'prefill', 'decode', 'denoise'], 'the current choice stays listed');
});
