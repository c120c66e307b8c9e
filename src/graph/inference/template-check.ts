import Mustache from 'mustache';

/** Why a node Template does not parse as Mustache, or undefined when it does (checked at agent creation). */
export function checkTemplate(template: string | null | undefined): string | undefined {
  if (!template) return undefined;
  try {
    Mustache.parse(template);
    return undefined;
  } catch (error) {
    return `template does not parse: ${(error as Error).message}`;
  }
}
