/** Accuracy and macro-F1 of a labelled classification run; pure, so it is tested without a model. */

export interface ClassificationOutcome {
  expected: string;
  /** The winner, or null when the classifier abstained (counted as wrong for every class). */
  predicted: string | null;
}

export interface ClassificationScore {
  total: number;
  correct: number;
  accuracy: number;
  /** Mean over the classes of F1 = 2·P·R / (P + R); a class never predicted and never expected is left out. */
  macroF1: number;
  /** Per class: precision, recall and F1 (0 where undefined), in the order of `classes`. */
  perClass: { label: string; precision: number; recall: number; f1: number; support: number }[];
}

/**
 * Scores outcomes against `classes` (the label set, so a class the classifier never predicts still counts in F1).
 * Empty input gives zeros, never NaN, so a report always prints.
 */
export function scoreClassification(classes: readonly string[], outcomes: readonly ClassificationOutcome[]): ClassificationScore {
  const correct = outcomes.filter((outcome) => outcome.predicted === outcome.expected).length;
  const perClass = classes.map((label) => {
    const truePositives = outcomes.filter((o) => o.expected === label && o.predicted === label).length;
    const predicted = outcomes.filter((o) => o.predicted === label).length;
    const support = outcomes.filter((o) => o.expected === label).length;
    const precision = predicted === 0 ? 0 : truePositives / predicted;
    const recall = support === 0 ? 0 : truePositives / support;
    const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
    return { label, precision, recall, f1, support, predicted };
  });
  const counted = perClass.filter((entry) => entry.support > 0 || entry.predicted > 0);
  const macroF1 = counted.length === 0 ? 0 : counted.reduce((total, entry) => total + entry.f1, 0) / counted.length;
  return {
    total: outcomes.length,
    correct,
    accuracy: outcomes.length === 0 ? 0 : correct / outcomes.length,
    macroF1,
    perClass: perClass.map(({ label, precision, recall, f1, support }) => ({ label, precision, recall, f1, support })),
  };
}
