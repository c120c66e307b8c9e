// docs/SCALING.md explains, line by line, the HAProxy config that test/e2e/load-balancer.test.ts runs: the page's
// config block must be what the test's config builder writes, so the two cannot drift apart.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBalancerConfig } from '../../helpers/haproxy-process.js';
import { repoRoot } from '../../helpers/llama-cpp.js';

describe('docs/SCALING.md', () => {
  it('shows the HAProxy config the load-balancer test runs (with production addresses and check interval)', () => {
    const page = readFileSync(join(repoRoot, 'docs', 'SCALING.md'), 'utf8');
    const blocks = [...page.matchAll(/```haproxy\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toBe(
      loadBalancerConfig({
        listen: '0.0.0.0:9100',
        servers: { serve1: 'dialog-1:9100', serve2: 'dialog-2:9100' },
        statsSocket: '/run/haproxy/llama-dialog.sock',
        checkInterval: '2s',
      }),
    );
  });
});
