#include "vector_index.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <queue>
#include <thread>

// USearch, headers only: no OpenMP (our threads are our own), no NumKong SIMD library (its sources are not in the
// headers we take), so distances use USearch's portable kernels, which the compiler vectorises.
#define USEARCH_USE_OPENMP 0
#define USEARCH_USE_NUMKONG 0
#include <usearch/index_dense.hpp>

#include "errors.h"

namespace llama_dialog {
namespace {

using HnswIndex = unum::usearch::index_dense_gt<uint64_t, uint32_t>;

// Below this share of allowed rows a filtered HNSW search scores the allowed rows exactly (see the header).
constexpr double kExactFallbackShare = 0.05;

// Reads an USearch error and takes it over (its destructor would throw otherwise); empty when there was none.
std::string TakeError(unum::usearch::error_t& error) {
  if (!error) return "";
  std::string message = error.what() != nullptr ? error.what() : "unknown USearch error";
  error.release();
  return message;
}

// The k best (smallest distance) of a stream of (distance, row), kept in a max-heap.
class TopK {
 public:
  explicit TopK(uint32_t k) : k_(k) {}
  void Offer(float distance, uint32_t row) {
    if (k_ == 0) return;
    if (heap_.size() < k_) {
      heap_.emplace(distance, row);
    } else if (distance < heap_.top().first) {
      heap_.pop();
      heap_.emplace(distance, row);
    }
  }
  SearchHits Take() {
    SearchHits hits;
    hits.rows.resize(heap_.size());
    hits.distances.resize(heap_.size());
    for (size_t i = heap_.size(); i-- > 0;) {
      hits.distances[i] = heap_.top().first;
      hits.rows[i] = heap_.top().second;
      heap_.pop();
    }
    return hits;
  }

 private:
  uint32_t k_;
  std::priority_queue<std::pair<float, uint32_t>> heap_;
};

// Eight running sums, so the compiler may vectorise the loop without -ffast-math (one sum would fix the order of
// the additions, which forbids it).
float Dot(const float* a, const float* b, uint32_t n) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (uint32_t lane = 0; lane < 8; ++lane) lanes[lane] += a[i + lane] * b[i + lane];
  }
  float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

void Normalise(const float* in, float* out, uint32_t n) {
  double sum = 0;
  for (uint32_t i = 0; i < n; ++i) sum += static_cast<double>(in[i]) * in[i];
  const float scale = sum > 0 ? static_cast<float>(1.0 / std::sqrt(sum)) : 0.0f;
  for (uint32_t i = 0; i < n; ++i) out[i] = in[i] * scale;
}

// USearch's distance between two unit rows: 1 - dot, through the vectorisable Dot. USearch's own portable cosine
// kernel keeps one running sum (and two norms it need not compute here: every row and query is unit length).
unum::usearch::distance_punned_t UnitCosineDistance(std::uintptr_t a, std::uintptr_t b, std::uintptr_t dimensions) {
  return 1.0f - Dot(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b), static_cast<uint32_t>(dimensions));
}

unum::usearch::metric_punned_t UnitCosineMetric(uint32_t dimensions) {
  return unum::usearch::metric_punned_t::stateless(dimensions, reinterpret_cast<std::uintptr_t>(&UnitCosineDistance),
                                                   unum::usearch::metric_punned_signature_t::array_array_size_k,
                                                   unum::usearch::metric_kind_t::cos_k, unum::usearch::scalar_kind_t::f32_k);
}

}  // namespace

struct VectorIndex::Hnsw {
  HnswIndex index;
};

VectorIndex::VectorIndex(Kind kind, uint32_t dimensions, HnswSettings hnsw)
    : kind_(kind), dimensions_(dimensions), settings_(hnsw) {
  if (dimensions == 0) throw DialogError(ErrorCode::InvalidArgument, "a vector index needs at least one dimension");
  if (settings_.threads == 0) settings_.threads = 1;
}

VectorIndex::~VectorIndex() = default;

void VectorIndex::CopyUnitRows(const float* vectors, uint32_t rows) {
  unit_.resize(static_cast<size_t>(rows) * dimensions_);
  for (uint32_t row = 0; row < rows; ++row) {
    Normalise(vectors + static_cast<size_t>(row) * dimensions_, unit_.data() + static_cast<size_t>(row) * dimensions_, dimensions_);
  }
  rows_ = rows;
}

void VectorIndex::Build(const float* vectors, uint32_t rows) {
  CopyUnitRows(vectors, rows);
  if (kind_ == Kind::kExact) return;
  unum::usearch::metric_punned_t metric = UnitCosineMetric(dimensions_);
  unum::usearch::index_dense_config_t config(settings_.connectivity, settings_.expansionAdd, settings_.expansionSearch);
  const uint32_t threads = std::max<uint32_t>(1, std::min<uint32_t>(settings_.threads, rows == 0 ? 1 : rows));
  auto made = HnswIndex::make(metric, config, unum::usearch::default_free_value<uint64_t>(),
                              unum::usearch::index_limits_t(std::max<uint32_t>(rows, 1), threads));
  const std::string makeError = TakeError(made.error);
  if (!makeError.empty()) throw DialogError(ErrorCode::InsufficientMemory, "cannot create the HNSW index: " + makeError);
  hnsw_ = std::make_unique<Hnsw>(Hnsw{std::move(made.index)});
  // Rows are inserted by `threads` workers, row i by worker i mod threads (USearch takes one thread id per worker).
  std::vector<std::string> errors(threads);
  auto insert = [&](uint32_t worker) {
    for (uint32_t row = worker; row < rows; row += threads) {
      auto added = hnsw_->index.add(row, unit_.data() + static_cast<size_t>(row) * dimensions_, worker);
      std::string error = TakeError(added.error);
      if (!error.empty()) {
        errors[worker] = error;
        return;
      }
    }
  };
  std::vector<std::thread> workers;
  for (uint32_t worker = 1; worker < threads; ++worker) workers.emplace_back(insert, worker);
  insert(0);
  for (std::thread& worker : workers) worker.join();
  for (const std::string& error : errors) {
    if (!error.empty()) throw DialogError(ErrorCode::InferenceFailed, "cannot add a row to the HNSW index: " + error);
  }
}

void VectorIndex::Restore(const float* vectors, uint32_t rows, const std::vector<uint8_t>& graph) {
  if (kind_ != Kind::kHnsw) throw DialogError(ErrorCode::InvalidArgument, "only an HNSW index restores a saved graph");
  CopyUnitRows(vectors, rows);
  unum::usearch::metric_punned_t metric = UnitCosineMetric(dimensions_);
  unum::usearch::index_dense_config_t config(settings_.connectivity, settings_.expansionAdd, settings_.expansionSearch);
  auto made = HnswIndex::make(metric, config);
  std::string error = TakeError(made.error);
  if (!error.empty()) throw DialogError(ErrorCode::InsufficientMemory, "cannot create the HNSW index: " + error);
  hnsw_ = std::make_unique<Hnsw>(Hnsw{std::move(made.index)});
  size_t offset = 0;
  auto loaded = hnsw_->index.load_from_stream([&](void* buffer, size_t length) {
    if (offset + length > graph.size()) return false;
    std::memcpy(buffer, graph.data() + offset, length);
    offset += length;
    return true;
  });
  error = TakeError(loaded.error);
  if (error.empty() && hnsw_->index.size() != rows) error = "the graph holds " + std::to_string(hnsw_->index.size()) + " rows, not " + std::to_string(rows);
  if (error.empty() && hnsw_->index.dimensions() != dimensions_) error = "the graph has another dimension";
  if (!error.empty()) {
    hnsw_.reset();
    throw DialogError(ErrorCode::InvalidArgument, "the saved HNSW graph is unusable: " + error);
  }
  // Loading picks USearch's built-in metric of the saved kind; ours gives the same distances, faster.
  hnsw_->index.change_metric(UnitCosineMetric(dimensions_));
  hnsw_->index.change_expansion_search(settings_.expansionSearch);
}

std::vector<uint8_t> VectorIndex::Serialize() const {
  std::vector<uint8_t> bytes;
  if (!hnsw_) return bytes;
  bytes.reserve(hnsw_->index.serialized_length());
  auto saved = hnsw_->index.save_to_stream([&](const void* buffer, size_t length) {
    const auto* from = static_cast<const uint8_t*>(buffer);
    bytes.insert(bytes.end(), from, from + length);
    return true;
  });
  const std::string error = TakeError(saved.error);
  if (!error.empty()) throw DialogError(ErrorCode::InferenceFailed, "cannot serialise the HNSW index: " + error);
  return bytes;
}

void VectorIndex::SetExpansionSearch(uint32_t expansion) {
  settings_.expansionSearch = expansion;
  if (hnsw_) hnsw_->index.change_expansion_search(expansion);
}

uint64_t VectorIndex::MemoryBytes() const {
  uint64_t bytes = static_cast<uint64_t>(unit_.size()) * sizeof(float);
  if (hnsw_) bytes += hnsw_->index.memory_usage();
  return bytes;
}

SearchHits VectorIndex::Search(const float* query, uint32_t k, float maxDistance, const uint8_t* allowed,
                               uint32_t allowedCount) const {
  std::vector<float> unitQuery(dimensions_);
  Normalise(query, unitQuery.data(), dimensions_);
  if (rows_ == 0 || k == 0 || (allowed != nullptr && allowedCount == 0)) return {};
  if (kind_ == Kind::kExact || !hnsw_) return SearchExact(unitQuery.data(), k, maxDistance, allowed);
  if (allowed != nullptr && static_cast<double>(allowedCount) < kExactFallbackShare * rows_) {
    SearchHits hits = SearchExact(unitQuery.data(), k, maxDistance, allowed);
    hits.exactFallback = true;
    return hits;
  }
  return SearchHnsw(unitQuery.data(), k, maxDistance, allowed);
}

SearchHits VectorIndex::SearchExact(const float* unitQuery, uint32_t k, float maxDistance, const uint8_t* allowed) const {
  TopK best(k);
  for (uint32_t row = 0; row < rows_; ++row) {
    if (allowed != nullptr && allowed[row] == 0) continue;
    const float distance = 1.0f - Dot(unitQuery, unit_.data() + static_cast<size_t>(row) * dimensions_, dimensions_);
    if (maxDistance >= 0 && distance > maxDistance) continue;
    best.Offer(distance, row);
  }
  return best.Take();
}

SearchHits VectorIndex::SearchHnsw(const float* unitQuery, uint32_t k, float maxDistance, const uint8_t* allowed) const {
  const uint32_t wanted = std::min(k, rows_);
  HnswIndex::search_result_t result = allowed == nullptr
      ? hnsw_->index.search(unitQuery, wanted, 0)
      : hnsw_->index.filtered_search(unitQuery, wanted, [allowed](uint64_t key) { return allowed[key] != 0; }, 0);
  const std::string error = TakeError(result.error);
  if (!error.empty()) throw DialogError(ErrorCode::InferenceFailed, "HNSW search failed: " + error);
  std::vector<uint64_t> keys(wanted);
  std::vector<float> distances(wanted);
  const size_t found = result.dump_to(keys.data(), distances.data());
  SearchHits hits;
  for (size_t i = 0; i < found; ++i) {
    if (maxDistance >= 0 && distances[i] > maxDistance) continue;
    hits.rows.push_back(static_cast<uint32_t>(keys[i]));
    hits.distances.push_back(distances[i]);
  }
  return hits;
}

}  // namespace llama_dialog
