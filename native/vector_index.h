// A vector index over rows 0..n-1 (a knowledge base's records, in order), searched by cosine distance
// (1 - cos, so 0 = same direction, 2 = opposite, as the reference server reports it).
//
// Two kinds, one interface:
//  - exact: every row scored against the query (a dot product with unit-length copies of the rows), the k best kept
//    in a heap. Cheapest for small stores, and the ground truth for the other kind.
//  - hnsw: USearch's HNSW graph (index_dense_gt, cosine metric, f32), compiled in from its headers (the `usearch` npm
//    package, a build-time dependency). Sub-linear search for large stores; an approximation whose recall the tests
//    measure against exact.
// A filter is a mask of allowed rows. Filtered rows are excluded during the search, before k is applied (the
// reference's rule), so a filtered search still returns k hits when k rows pass. HNSW's filtered walk can starve when
// few rows pass (their graph neighbours are mostly excluded), so below a share of allowed rows the index scores the
// allowed rows exactly instead: it is cheap precisely then.
//
// Thread rules: Build runs once, off the JS thread, before any search; Search is const and runs on the JS thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llama_dialog {

struct HnswSettings {
  uint32_t connectivity = 16;
  uint32_t expansionAdd = 128;
  uint32_t expansionSearch = 64;
  /** Threads that insert rows in parallel while building. */
  uint32_t threads = 2;
};

struct SearchHits {
  std::vector<uint32_t> rows;
  std::vector<float> distances;
  /** True when a filtered HNSW search fell back to scoring the allowed rows exactly. */
  bool exactFallback = false;
};

class VectorIndex {
 public:
  enum class Kind { kExact, kHnsw };

  VectorIndex(Kind kind, uint32_t dimensions, HnswSettings hnsw);
  ~VectorIndex();
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;

  /** Takes `rows` × dimensions floats (any length per row; copies are normalised) and builds. Once. Any thread. */
  void Build(const float* vectors, uint32_t rows);
  /** Restores a built HNSW graph saved by Serialize, over the same vectors (hnsw only). Any thread. */
  void Restore(const float* vectors, uint32_t rows, const std::vector<uint8_t>& graph);
  /** The HNSW graph as bytes (hnsw only; empty for exact). Any thread, after Build. */
  std::vector<uint8_t> Serialize() const;

  /**
   * The `k` nearest rows to `query` with distance <= maxDistance (a negative maxDistance = no limit), nearest first.
   * `allowed` (optional, one byte per row, non-zero = allowed) filters during the search; `allowedCount` is how many
   * rows it allows.
   */
  SearchHits Search(const float* query, uint32_t k, float maxDistance, const uint8_t* allowed, uint32_t allowedCount) const;

  Kind kind() const { return kind_; }
  uint32_t dimensions() const { return dimensions_; }
  uint32_t rows() const { return rows_; }
  void SetExpansionSearch(uint32_t expansion);
  /** Bytes held (the unit rows, plus the HNSW graph with its own copy of the vectors). */
  uint64_t MemoryBytes() const;

 private:
  struct Hnsw;
  SearchHits SearchExact(const float* unitQuery, uint32_t k, float maxDistance, const uint8_t* allowed) const;
  SearchHits SearchHnsw(const float* unitQuery, uint32_t k, float maxDistance, const uint8_t* allowed) const;
  void CopyUnitRows(const float* vectors, uint32_t rows);

  Kind kind_;
  uint32_t dimensions_;
  HnswSettings settings_;
  uint32_t rows_ = 0;
  std::vector<float> unit_;  // rows × dimensions, each of length 1 (or all zero)
  std::unique_ptr<Hnsw> hnsw_;
};

}  // namespace llama_dialog
