import { LlamaDialogError } from '../errors.js';

/** A download address as `pull` and the catalog understand it. */
export interface ModelUrl {
  /** The http(s) address fetched. */
  url: string;
  /** Name of the file in the model cache: the address's last path segment, decoded. */
  fileName: string;
}

const HF_PREFIX = 'hf:';

/** True when `reference` is a download address (`http://`, `https://` or the `hf:` shorthand), not a name or path. */
export function isModelUrl(reference: string): boolean {
  return reference.startsWith(HF_PREFIX) || /^https?:\/\//i.test(reference);
}

/**
 * Reads a download address: an `http(s)://` URL, or `hf:<owner>/<repo>/<file>` for
 * `https://huggingface.co/<owner>/<repo>/resolve/main/<file>`. `<file>` may sit in folders of the repo
 * (`hf:owner/repo/sub/model.gguf`); `hf:<owner>/<repo>@<revision>/<file>` picks a branch, tag or commit instead of
 * `main` (a revision with slashes, such as refs/pr/1, is written percent-encoded: `refs%2Fpr%2F1`).
 * @throws LlamaDialogError InvalidArgument for anything else, or an address whose last segment is no file name.
 */
export function parseModelUrl(reference: string): ModelUrl {
  const url = reference.startsWith(HF_PREFIX) ? huggingFaceUrl(reference) : plainUrl(reference);
  return { url, fileName: fileNameOf(url, reference) };
}

function huggingFaceUrl(reference: string): string {
  const match = /^hf:([^/@\s]+)\/([^/@\s]+)(?:@([^/@\s]+))?\/(.+)$/.exec(reference);
  const file = match?.[4];
  if (!match || !file || file.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new LlamaDialogError(
      'InvalidArgument',
      `"${reference}" is not a Hugging Face file: write hf:<owner>/<repo>/<file> or hf:<owner>/<repo>@<revision>/<file>`,
    );
  }
  const [, owner, repo, revision = 'main'] = match as unknown as [string, string, string, string | undefined];
  const path = file.split('/').map(encodeURIComponent).join('/');
  // Decoded first, so a revision given percent-encoded (refs%2Fpr%2F1) is encoded once, as one path segment.
  return `https://huggingface.co/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/resolve/${encodeURIComponent(decoded(revision))}/${path}`;
}

function plainUrl(reference: string): string {
  let url: URL;
  try {
    url = new URL(reference);
  } catch {
    throw new LlamaDialogError('InvalidArgument', `"${reference}" is not a URL: give http(s)://... or hf:<owner>/<repo>/<file>`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new LlamaDialogError('InvalidArgument', `"${reference}": only http and https downloads are supported, not ${url.protocol}`);
  }
  return url.href;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function fileNameOf(url: string, reference: string): string {
  const name = decoded(new URL(url).pathname.split('/').at(-1) ?? '');
  // The name becomes a path in the cache: nothing that could climb out of it or hide.
  if (name === '' || name === '.' || name === '..' || name.startsWith('.') || /[/\\\0]/.test(name)) {
    throw new LlamaDialogError('InvalidArgument', `"${reference}" does not end in a file name to store the model under`);
  }
  return name;
}
