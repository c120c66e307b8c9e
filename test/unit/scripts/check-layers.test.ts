import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const checker = join(repoRoot, 'scripts', 'check-layers.mjs');

function runChecker(root: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [checker, root], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A throwaway tree with a src/ folder holding `files` (path under src → source text). */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'llama-dialog-layers-'));
  for (const [path, text] of Object.entries(files)) {
    const full = join(root, 'src', path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  return root;
}

describe('import-boundary check (scripts/check-layers.mjs)', () => {
  it('passes on this repository', () => {
    const result = runChecker(repoRoot);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('fails on a lower layer importing a higher one, naming the file and the import', () => {
    const root = fixture({
      'errors.ts': 'export class LlamaDialogError extends Error {}\n',
      'agent/agent-variables.ts': "import { LlamaDialogError } from '../errors.js';\nexport class AgentVariables {}\n",
      // The back-edge the first review found: the node contract importing the agent's classes.
      'graph/node-run-context.ts': "import type { AgentVariables } from '../agent/agent-variables.js';\nexport type X = AgentVariables;\n",
    });
    const result = runChecker(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("src/graph/node-run-context.ts: import '../agent/agent-variables.js' (graph sits below agent)");
    expect(result.stderr).not.toContain('src/agent/agent-variables.ts');
  });

  it('lets only the CLI import bench, and only cli and index import server', () => {
    const root = fixture({
      'bench/workloads.ts': 'export const workloads = [];\n',
      'server/server.ts': 'export const server = 1;\n',
      'cli/commands/bench.ts': "import { workloads } from '../../bench/workloads.js';\nimport { server } from '../../server/server.js';\n",
      'agent/session.ts': "export { workloads } from '../bench/workloads.js';\n",
      'bench/runner.ts': "const lazy = () => import('../server/server.js');\n",
    });
    const result = runChecker(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("src/agent/session.ts: import '../bench/workloads.js' (only cli may import bench)");
    expect(result.stderr).toContain("src/bench/runner.ts: import '../server/server.js' (only cli and index may import server)");
    expect(result.stderr).not.toContain('src/cli/');
  });

  it('fails on a folder no layer claims and on imports that leave src/', () => {
    const root = fixture({
      'helpers/misc.ts': 'export const misc = 1;\n',
      'prompt/fake.ts': "import { x } from '../../test/kit.js';\n",
    });
    const result = runChecker(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('src/helpers/misc.ts: belongs to no layer');
    expect(result.stderr).toContain("src/prompt/fake.ts: import '../../test/kit.js' (leaves src/)");
  });

  it('accepts imports down the layers and within a layer', () => {
    const root = fixture({
      'errors.ts': 'export {};\n',
      'engine/types.ts': "import '../errors.js';\nexport interface T {}\n",
      'graph/nodes/generate-node.ts': "import type { T } from '../../engine/types.js';\nimport { x } from '../inference-port.js';\n",
      'graph/inference-port.ts': 'export const x = 1;\n',
      'diag/recorder.ts': "import type { x } from '../graph/inference-port.js';\n",
    });
    const result = runChecker(root);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
