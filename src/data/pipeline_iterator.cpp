// jx::data iterators: reading a pipeline epoch after epoch, the prefetch thread, the thread
// pool of the maps, and iterator states (save / restore).
//
// The iterator asks the pipeline for global indices g = epoch * length + position in order.
// Elements are computed in chunks (as many as the maps can run in parallel); with prefetch a
// producer thread computes chunks ahead into a bounded buffer. Since element g is a function
// of g alone, the buffer can be dropped at any time (set_state, an error, destruction) and
// recomputed later: the consumer's (epoch, position) is the whole state.
#include <omp.h>

#include <algorithm>
#include <atomic>

#include "data/pipeline_internal.h"
#include "jx/error.h"
#include "jx/numpy.h"
#include "support/profiler.h"
#include "support/str.h"

namespace jx::data {

namespace detail {

// A pipeline thread runs beside the training step, whose kernels keep every core busy in
// OpenMP teams that wait for each other at barriers. An OpenMP team of its own (the default
// for jx ops run on a new thread) would put twice as many threads as cores on the machine,
// and each preempted member of the step's team stalls the rest: on 2 cores, train_cnn's
// epoch took 16.8-18.0 s with a prefetching pipeline and 13.5 s without. The pipeline's jx
// ops (gathers, conversions, stacking a batch) are small; on one thread they cost the step
// little.
void run_jx_ops_on_this_thread_only() { omp_set_num_threads(1); }

ThreadPool::ThreadPool(int num_threads) {
  workers_.reserve(size_t(num_threads));
  for (int i = 0; i < num_threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::work() {
  run_jx_ops_on_this_thread_only();
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stop_, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

void ThreadPool::parallel_for(int64_t n, int max_workers, const std::function<void(int64_t)>& fn) {
  int tasks = int(std::min<int64_t>({n, int64_t(max_workers), int64_t(size())}));
  if (tasks <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Lives on this stack frame until every task has finished with it.
  struct Job {
    std::atomic<int64_t> next{0};
    std::mutex mu;
    std::condition_variable done;
    int active = 0;
  } job;
  job.active = tasks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int t = 0; t < tasks; ++t)
      tasks_.emplace_back([&job, &fn, n] {
        for (int64_t i; (i = job.next.fetch_add(1)) < n;) fn(i);
        std::lock_guard<std::mutex> l(job.mu);
        if (--job.active == 0) job.done.notify_all();
      });
  }
  cv_.notify_all();
  std::unique_lock<std::mutex> lock(job.mu);
  job.done.wait(lock, [&job] { return job.active == 0; });
}

namespace {

struct Item {
  int64_t g = 0;
  Tree value;
  std::exception_ptr error;
};

int64_t scalar_int(const Array& a, const char* field) {
  if (!a.valid() || a.ndim() != 0 || !is_integer(a.dtype()))
    throw ValueError(str("[Iterator.set_state] state.", field, " must be an integer scalar, got ",
                         a.valid() ? type_str(a.dtype(), a.shape()) : std::string("no array"),
                         "; pass a state made by Iterator::state()"));
  return a.astype(DType::Int64).item<int64_t>();
}

}  // namespace
}  // namespace detail

using detail::Item;
using detail::kInfinite;

struct Iterator::Impl {
  Dataset ds;
  std::shared_ptr<const detail::Node> node;
  int64_t length = 0;
  int64_t epoch = 0, position = 0;
  int64_t chunk = 1;
  int64_t prefetch = 0;
  std::unique_ptr<detail::ThreadPool> pool;
  detail::Exec exec;
  std::vector<Array> keys;

  std::deque<Item> ready;  // computed ahead without prefetch (one chunk)

  // The prefetch producer and its buffer.
  std::thread producer;
  std::mutex mu;
  std::condition_variable to_consumer, to_producer;
  std::deque<Item> buffer;
  bool stop = false, producer_done = false;

  Impl(Dataset d, int64_t e, int64_t p) : ds(std::move(d)), node(ds.node()) {
    length = node->length();
    chunk = node->parallelism();
    prefetch = ds.prefetch_size();
    if (node->max_threads() > 1) pool = std::make_unique<detail::ThreadPool>(node->max_threads());
    exec.pool = pool.get();
    node->collect_keys(keys);
    seek(e, p, "Iterator");
  }
  ~Impl() { stop_producer(); }

  void seek(int64_t e, int64_t p, const char* op) {
    if (e < 0 || p < 0)
      throw ValueError(str("[", op, "] epoch and position must be at least 0, got epoch ", e,
                           ", position ", p));
    if (length == kInfinite && e != 0)
      throw ValueError(str("[", op, "] ", node->str(), " is infinite (one endless epoch 0); "
                           "got epoch ", e));
    if (length != kInfinite && p > length)
      throw ValueError(str("[", op, "] position ", p, " is past the end of an epoch of ", length,
                           " elements"));
    stop_producer();
    ready.clear();
    epoch = e;
    position = p;
  }

  int64_t global_index() const { return length == kInfinite ? position : epoch * length + position; }

  // Elements g0, g0 + 1, ...: `count` of them, or fewer ending with the first one that failed
  // (so that the elements before an error still come out, and the error at its own index).
  std::vector<Item> compute(int64_t g0, int64_t count) const {
    std::vector<int64_t> g(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) g[size_t(i)] = g0 + i;
    std::vector<Item> items;
    try {
      std::vector<Tree> values = node->get_many(g, exec);
      for (int64_t i = 0; i < count; ++i) items.push_back({g0 + i, std::move(values[size_t(i)]), nullptr});
      return items;
    } catch (...) {
      if (count == 1) return {Item{g0, Tree(), std::current_exception()}};
    }
    for (int64_t gi : g) {
      std::vector<Item> one = compute(gi, 1);
      items.push_back(std::move(one[0]));
      if (items.back().error) break;
    }
    return items;
  }

  void start_producer() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = producer_done = false;
      buffer.clear();
    }
    int64_t g0 = global_index();
    producer = std::thread([this, g0] { produce(g0); });
  }

  void stop_producer() {
    if (!producer.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    to_producer.notify_all();
    producer.join();
    std::lock_guard<std::mutex> lock(mu);
    buffer.clear();
  }

  void produce(int64_t g) {
    detail::run_jx_ops_on_this_thread_only();
    for (;;) {
      int64_t count;
      {
        std::unique_lock<std::mutex> lock(mu);
        to_producer.wait(lock, [this] { return stop || int64_t(buffer.size()) < prefetch; });
        if (stop) return;
        count = std::min(chunk, prefetch - int64_t(buffer.size()));
      }
      std::vector<Item> items;
      try {
        items = compute(g, count);
      } catch (...) {  // compute catches the pipeline's errors; this is e.g. bad_alloc
        items = {Item{g, Tree(), std::current_exception()}};
      }
      bool failed = bool(items.back().error);
      g += int64_t(items.size());
      {
        std::lock_guard<std::mutex> lock(mu);
        if (stop) return;
        for (Item& it : items) buffer.push_back(std::move(it));
        producer_done = failed;
      }
      to_consumer.notify_one();
      if (failed) return;
    }
  }

  Item take_prefetched(int64_t g) {
    if (!producer.joinable()) start_producer();
    Item item;
    {
      JX_PROFILE_SCOPE("data",
                       [&](std::string& n, prof::Args& a) { n = "wait for batch", a.add("index", g); });
      std::unique_lock<std::mutex> lock(mu);
      to_consumer.wait(lock, [this] { return !buffer.empty() || producer_done; });
      if (buffer.empty()) throw InternalError("[Iterator] the prefetch thread ended without an element");
      item = std::move(buffer.front());
      buffer.pop_front();
    }
    to_producer.notify_one();
    if (item.error) stop_producer();  // the producer has ended; the next call starts anew
    return item;
  }

  Item take_serial(int64_t g) {
    if (ready.empty() || ready.front().g != g) {
      ready.clear();
      for (Item& it : compute(g, chunk)) ready.push_back(std::move(it));
    }
    Item item = std::move(ready.front());
    ready.pop_front();
    if (item.error) ready.clear();
    return item;
  }

  std::optional<Tree> next() {
    if (length == 0 || (length != kInfinite && position == length)) {
      ++epoch;
      position = 0;
      return std::nullopt;
    }
    int64_t g = global_index();
    Item item = prefetch > 0 ? take_prefetched(g) : take_serial(g);
    if (item.g != g) throw InternalError(str("[Iterator] expected element ", g, ", got ", item.g));
    if (item.error) std::rethrow_exception(item.error);  // position stays: next() retries it
    ++position;
    return std::move(item.value);
  }
};

Iterator::Iterator(Dataset ds, int64_t epoch, int64_t position) {
  if (!ds.node())
    throw ValueError("[Iterator] the Dataset is empty (default-constructed); start from a source");
  impl_ = std::make_unique<Impl>(std::move(ds), epoch, position);
}
Iterator::Iterator(Iterator&&) noexcept = default;
Iterator& Iterator::operator=(Iterator&&) noexcept = default;
Iterator::~Iterator() = default;

// A moved-from Iterator has no Impl; using it is a mistake to report, not to crash on.
static void require_impl(const void* impl, const char* op) {
  if (!impl)
    throw ValueError(str("[", op, "] this Iterator was moved from; use the Iterator it was moved "
                         "to, or make a new one with Dataset::iterator()"));
}

std::optional<Tree> Iterator::next() {
  require_impl(impl_.get(), "Iterator.next");
  return impl_->next();
}
int64_t Iterator::epoch() const {
  require_impl(impl_.get(), "Iterator.epoch");
  return impl_->epoch;
}
int64_t Iterator::position() const {
  require_impl(impl_.get(), "Iterator.position");
  return impl_->position;
}

IteratorState Iterator::state() const {
  require_impl(impl_.get(), "Iterator.state");
  const Impl& m = *impl_;
  IteratorState s;
  s.epoch = numpy::array(m.epoch, DType::Int64);
  s.position = numpy::array(m.position, DType::Int64);
  s.epoch_length = numpy::array(m.length, DType::Int64);
  s.keys = m.keys.empty() ? numpy::zeros({0, 2}, DType::UInt32) : numpy::stack(m.keys, 0);
  return s;
}

void Iterator::set_state(const IteratorState& state) {
  require_impl(impl_.get(), "Iterator.set_state");
  Impl& m = *impl_;
  const char* op = "Iterator.set_state";
  int64_t e = detail::scalar_int(state.epoch, "epoch");
  int64_t p = detail::scalar_int(state.position, "position");
  int64_t len = detail::scalar_int(state.epoch_length, "epoch_length");
  if (len != m.length)
    throw ValueError(str("[", op, "] the state was taken from a dataset with ",
                         len == kInfinite ? std::string("infinite") : str(len),
                         " elements per epoch, but ", m.node->str(), " has ",
                         m.length == kInfinite ? std::string("infinitely many") : str(m.length),
                         "; restore it into the pipeline it was saved from"));
  const Array& k = state.keys;
  bool keys_ok = k.valid() && k.dtype() == DType::UInt32 && k.ndim() == 2 &&
                 k.shape()[0] == int64_t(m.keys.size()) && k.shape()[1] == 2;
  if (keys_ok && !m.keys.empty())
    keys_ok = k.to_vector<uint32_t>() == numpy::stack(m.keys, 0).to_vector<uint32_t>();
  if (!keys_ok)
    throw ValueError(str("[", op, "] the state's keys ",
                         k.valid() ? type_str(k.dtype(), k.shape()) : std::string("(none)"),
                         " differ from the ", m.keys.size(), " keys of ", m.node->str(),
                         " (shuffle and augmentation keys, in order); restore it into the "
                         "pipeline it was saved from, made with the same keys"));
  m.seek(e, p, op);
}

ElementIterator::ElementIterator(std::shared_ptr<Iterator> it) : it_(std::move(it)) {
  current_ = it_->next();
}

ElementIterator& ElementIterator::operator++() {
  current_ = it_->next();
  return *this;
}

ElementIterator EpochRange::begin() const {
  return ElementIterator(std::make_shared<Iterator>(ds_, epoch_, 0));
}

}  // namespace jx::data
