import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface LoreRecord {
  id: string;
  text: string;
  metadata: { topic: string; place: string; kind: string; tags: string[] };
}

interface LoreQuestion {
  question: string;
  relevant: string[];
}

const KINDS = new Set(['person', 'place', 'law', 'price', 'history', 'creature', 'quest', 'custom', 'item', 'route']);
const NO_ANSWER_QUESTIONS = 5;

function readJson(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../../src/bench/knowledge-data/${name}`, import.meta.url), 'utf8'));
}

function wordCount(text: string): number {
  return text.trim().split(/\s+/).length;
}

const records = readJson('lore-v1.kb.json') as LoreRecord[];
const questions = readJson('lore-v1-questions.json') as LoreQuestion[];

describe('lore-v1 knowledge records', () => {
  it('is an array of at least 300 records with unique ids', () => {
    expect(Array.isArray(records)).toBe(true);
    expect(records.length).toBeGreaterThanOrEqual(300);
    const ids = records.map((record) => record.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every record a non-empty id and only the keys id, text and metadata', () => {
    for (const record of records) {
      expect(Object.keys(record).sort(), record.id).toEqual(['id', 'metadata', 'text']);
      expect(typeof record.id).toBe('string');
      expect(record.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    }
  });

  it('keeps every text between 10 and 60 words', () => {
    for (const record of records) {
      expect(typeof record.text, record.id).toBe('string');
      const words = wordCount(record.text);
      expect(words, record.id).toBeGreaterThanOrEqual(10);
      expect(words, record.id).toBeLessThanOrEqual(60);
    }
  });

  it('has unique texts', () => {
    const texts = records.map((record) => record.text);
    expect(new Set(texts).size).toBe(texts.length);
  });

  it('gives every record topic, place, a known kind and string tags', () => {
    for (const record of records) {
      const { metadata } = record;
      expect(typeof metadata, record.id).toBe('object');
      expect(Object.keys(metadata).sort(), record.id).toEqual(['kind', 'place', 'tags', 'topic']);
      expect(metadata.topic, record.id).toMatch(/^[a-z]+$/);
      expect(typeof metadata.place, record.id).toBe('string');
      expect(metadata.place.length, record.id).toBeGreaterThan(0);
      expect(KINDS.has(metadata.kind), `${record.id}: kind ${metadata.kind}`).toBe(true);
      expect(Array.isArray(metadata.tags), record.id).toBe(true);
      expect(metadata.tags.length, record.id).toBeGreaterThan(0);
      for (const tag of metadata.tags) expect(typeof tag, record.id).toBe('string');
    }
  });

  it('uses every kind at least once', () => {
    expect(new Set(records.map((record) => record.metadata.kind))).toEqual(KINDS);
  });
});

describe('lore-v1 questions', () => {
  const ids = new Set(records.map((record) => record.id));

  it('has at least 60 questions, each with 0 to 3 relevant ids', () => {
    expect(Array.isArray(questions)).toBe(true);
    expect(questions.length).toBeGreaterThanOrEqual(60);
    for (const question of questions) {
      expect(Object.keys(question).sort()).toEqual(['question', 'relevant']);
      expect(typeof question.question).toBe('string');
      expect(question.question.trim().length).toBeGreaterThan(0);
      expect(Array.isArray(question.relevant), question.question).toBe(true);
      expect(question.relevant.length, question.question).toBeLessThanOrEqual(3);
      expect(new Set(question.relevant).size, question.question).toBe(question.relevant.length);
    }
  });

  it('names only record ids that exist', () => {
    for (const question of questions) {
      for (const id of question.relevant) expect(ids.has(id), `${question.question} -> ${id}`).toBe(true);
    }
  });

  it('has exactly the no-answer questions with empty relevant lists', () => {
    const noAnswer = questions.filter((question) => question.relevant.length === 0);
    expect(noAnswer.length).toBe(NO_ANSWER_QUESTIONS);
    expect(questions.length - noAnswer.length).toBeGreaterThanOrEqual(60);
  });

  it('has unique questions, none equal to a record text', () => {
    const texts = new Set(records.map((record) => record.text.trim().toLowerCase()));
    const asked = questions.map((question) => question.question.trim().toLowerCase());
    expect(new Set(asked).size).toBe(asked.length);
    for (const question of asked) expect(texts.has(question), question).toBe(false);
  });
});
