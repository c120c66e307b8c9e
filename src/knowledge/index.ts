// The knowledge layer's public surface (re-exported by src/index.ts).
export { KNOWLEDGE_LIMITS, FILTER_LIMITS } from './knowledge-limits.js';
export { KNOWLEDGE_FIELD_TYPES, type KnowledgeFieldType, type KnowledgeValue } from './knowledge-value.js';
export { KnowledgeFieldSchema, type KnowledgeField, type KnowledgeFieldDeclaration } from './field-schema.js';
export {
  normalizeKnowledgeRecord,
  normalizeKnowledgeRecords,
  type KnowledgeRecord,
  type KnowledgeRecordInput,
} from './knowledge-record.js';
export { readKnowledgeRecordsFile } from './knowledge-records-file.js';
export { parseKnowledgeBaseConfig, readKnowledgeBaseConfig, type KnowledgeBaseConfig } from './knowledge-base-config.js';
export { FILTER_ERROR_SUBCODES, FilterCompileError, type FilterErrorSubcode } from './filter-compile-error.js';
export {
  RecordFilter,
  compileRecordFilter,
  type FilterAgentProblem,
  type FilterVariables,
  type RecordFilterOptions,
} from './record-filter.js';
