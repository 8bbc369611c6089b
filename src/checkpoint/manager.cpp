// CheckpointManager: numbered steps in one directory, with Orbax's save policy and retention
// (checkpoint_manager.py: should_save, _get_old_steps_to_remove), an asynchronous writer, and
// the commit protocol of ckpt::save (temporary directory, fsync, rename).
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <iostream>
#include <thread>

#include "checkpoint/files.h"
#include "checkpoint/item.h"
#include "jx/checkpoint.h"
#include "jx/error.h"
#include "support/json.h"
#include "support/profiler.h"
#include "support/str.h"

namespace jx::ckpt {

using namespace detail;

namespace {

constexpr const char* kStepMetadata = "_CHECKPOINT_METADATA";

std::string number_text(double f) {
  if (std::isnan(f)) return "\"nan\"";
  if (std::isinf(f)) return f > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}

std::string step_metadata_json(int64_t step, const Composite& items,
                               const std::optional<Metrics>& metrics) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  std::string out = str("{\"format\":\"jx.checkpoint.step\",\"version\":", kFormatVersion,
                        ",\"step\":", step, ",\"commit_time_ns\":", ns, ",\"items\":[");
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ",";
    jx::detail::json_quote(out, items[i].first);
  }
  out += "]";
  if (metrics) {
    out += ",\"metrics\":{";
    bool first = true;
    for (const auto& [k, v] : *metrics) {
      if (!first) out += ",";
      first = false;
      jx::detail::json_quote(out, k);
      out += ":";
      out += number_text(v);
    }
    out += "}";
  }
  return out + "}\n";
}

struct StepMetadata {
  std::vector<std::string> items;
  std::optional<Metrics> metrics;
};

StepMetadata read_step_metadata(const std::string& step_dir, const char* op) {
  std::string file = join_path(step_dir, kStepMetadata);
  std::string text = read_small_file(file, size_t(1) << 26, op);
  auto bad = [&](const std::string& msg) -> IOError {
    return IOError(str("[", op, "] '", file, "' ", msg));
  };
  jx::detail::Json root;
  try {
    root = jx::detail::parse_json(text.data(), text.size(), 16);
  } catch (const jx::detail::JsonSyntaxError& e) {
    throw bad(str("is not valid JSON: ", e.what(), " at byte ", e.offset));
  }
  const jx::detail::Json* format = root.kind == jx::detail::Json::Obj ? root.find("format") : nullptr;
  if (!format || format->s != "jx.checkpoint.step") throw bad("is not a jx step description");
  StepMetadata m;
  if (const auto* items = root.find("items")) {
    if (items->kind != jx::detail::Json::Arr) throw bad("has \"items\" that are not a list");
    for (const auto& it : items->arr) {
      if (it.kind != jx::detail::Json::Str) throw bad("has an item name that is not a string");
      m.items.push_back(it.s);
    }
  }
  if (const auto* metrics = root.find("metrics")) {
    if (metrics->kind != jx::detail::Json::Obj) throw bad("has \"metrics\" that are not an object");
    Metrics out;
    for (const auto& [k, v] : metrics->obj) {
      double f;
      if (v.kind == jx::detail::Json::Str && (v.s == "nan" || v.s == "inf" || v.s == "-inf")) {
        f = v.s == "nan" ? std::nan("") : v.s == "inf" ? HUGE_VAL : -HUGE_VAL;
      } else {
        auto r = std::from_chars(v.s.data(), v.s.data() + v.s.size(), f);
        if (v.kind != jx::detail::Json::Num || r.ec != std::errc() || r.ptr != v.s.data() + v.s.size())
          throw bad(str("has a metric \"", k, "\" that is not a number"));
      }
      out[k] = f;
    }
    m.metrics = std::move(out);
  }
  return m;
}

void check_item_name(const std::string& name, const char* op) {
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.' ||
      name == kStepMetadata || is_temporary_name(name))
    throw ValueError(str("[", op, "] '", name,
                         "' cannot name a checkpoint item: use a non-empty name without '/' that "
                         "does not start with '.'"));
}

}  // namespace

// A save whose files are being written by a background thread.
struct CheckpointManager::Pending {
  int64_t step = 0;
  std::thread thread;
  std::atomic<bool> done{false};
  std::exception_ptr error;
};

CheckpointManager::CheckpointManager(std::string directory, ManagerOptions options)
    : directory_(std::move(directory)), options_(std::move(options)) {
  const char* op = "CheckpointManager";
  auto bad = [&](const std::string& msg) { throw ValueError(str("[", op, "] ", msg)); };
  if (directory_.empty()) bad("the directory is empty");
  if (options_.save_interval_steps < 1)
    bad(str("save_interval_steps must be at least 1, not ", options_.save_interval_steps));
  if (options_.max_to_keep && *options_.max_to_keep < 0)
    bad(str("max_to_keep must be unset or non-negative, not ", *options_.max_to_keep));
  if (options_.keep_period && *options_.keep_period < 1)
    bad(str("keep_period must be unset or at least 1, not ", *options_.keep_period));
  if (options_.step_format_fixed_length && *options_.step_format_fixed_length < 1)
    bad(str("step_format_fixed_length must be unset or at least 1, not ",
            *options_.step_format_fixed_length));
  if (options_.step_prefix.find('/') != std::string::npos)
    bad(str("step_prefix '", options_.step_prefix, "' may not contain '/'"));
  // In a multi-process run process 0 prepares the directory, then every process reads the
  // same steps before any saves again (agree_written is the barrier).
  std::exception_ptr error;
  if (is_primary_process()) {
    try {
      if (!is_directory(directory_)) {
        if (path_exists(directory_))
          throw IOError(str("[", op, "] '", directory_, "' exists and is not a directory"));
        if (!options_.create || options_.read_only)
          throw IOError(str("[", op, "] '", directory_, "' does not exist (create it, or pass {.create = true})"));
        make_directories(directory_, op);
      }
      if (options_.cleanup_tmp_directories && !options_.read_only)
        for (const std::string& name : list_directory(directory_, op))
          if (is_temporary_name(name)) remove_tree(join_path(directory_, name), op);
    } catch (...) {
      error = std::current_exception();
    }
  }
  agree_written(error != nullptr, op, directory_);
  if (error) std::rethrow_exception(error);
  load_infos();
  agree_written(false, op, directory_);
}

CheckpointManager::~CheckpointManager() {
  try {
    wait_until_finished();
  } catch (const std::exception& e) {
    std::cerr << "jx::ckpt::CheckpointManager: the last save failed: " << e.what() << "\n";
  }
}

std::string CheckpointManager::step_name(int64_t step) const {
  std::string digits = std::to_string(step);
  if (options_.step_format_fixed_length && int(digits.size()) < *options_.step_format_fixed_length)
    digits.insert(0, size_t(*options_.step_format_fixed_length) - digits.size(), '0');
  return options_.step_prefix.empty() ? digits : str(options_.step_prefix, "_", digits);
}

void CheckpointManager::load_infos() {
  const char* op = "CheckpointManager";
  checkpoints_.clear();
  std::string prefix = options_.step_prefix.empty() ? "" : str(options_.step_prefix, "_");
  for (const std::string& name : list_directory(directory_, op)) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string digits = name.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    if (options_.step_format_fixed_length
            ? int(digits.size()) != *options_.step_format_fixed_length
            : (digits.size() > 1 && digits[0] == '0'))
      continue;
    int64_t step;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), step);
    if (r.ec != std::errc()) continue;
    std::string dir = join_path(directory_, name);
    if (!is_directory(dir)) continue;
    std::optional<Metrics> metrics;
    if (path_exists(join_path(dir, kStepMetadata))) metrics = read_step_metadata(dir, op).metrics;
    checkpoints_.push_back(Info{step, std::move(metrics)});
  }
  std::sort(checkpoints_.begin(), checkpoints_.end(),
            [](const Info& a, const Info& b) { return a.step < b.step; });
}

void CheckpointManager::reload() {
  wait_until_finished();
  load_infos();
}

std::vector<int64_t> CheckpointManager::all_steps() const {
  std::vector<int64_t> out;
  for (const Info& i : checkpoints_) out.push_back(i.step);
  return out;
}

std::optional<int64_t> CheckpointManager::latest_step() const {
  if (checkpoints_.empty()) return std::nullopt;
  return checkpoints_.back().step;
}

std::optional<Metrics> CheckpointManager::metrics(int64_t step) const {
  for (const Info& i : checkpoints_)
    if (i.step == step) return i.metrics;
  return std::nullopt;
}

bool CheckpointManager::should_save(int64_t step) const {
  if (options_.read_only) return false;
  std::optional<int64_t> latest = latest_step();
  if (latest && *latest >= step) return false;
  if (options_.should_save_fn) return options_.should_save_fn(step, latest);
  return !latest || step % options_.save_interval_steps == 0 || options_.save_on_steps.count(step);
}

// Orbax's _get_old_steps_to_remove, without time intervals and locks (which jx does not have).
std::vector<int64_t> CheckpointManager::steps_to_remove() const {
  if (!options_.max_to_keep || int64_t(checkpoints_.size()) <= *options_.max_to_keep) return {};
  std::vector<const Info*> without_metrics, sorted;
  if (options_.best_fn) {
    for (const Info& i : checkpoints_) (i.metrics ? sorted : without_metrics).push_back(&i);
    // Ascending quality: the best steps end up last.
    std::stable_sort(sorted.begin(), sorted.end(), [&](const Info* a, const Info* b) {
      double x = options_.best_fn(*a->metrics), y = options_.best_fn(*b->metrics);
      return options_.best_mode == BestMode::max ? x < y : x > y;
    });
  } else {
    for (const Info& i : checkpoints_) sorted.push_back(&i);
  }
  size_t keep = size_t(*options_.max_to_keep);
  std::vector<const Info*> maybe_delete, kept;
  auto last = [](const std::vector<const Info*>& v, size_t n) {
    return std::vector<const Info*>(v.end() - std::ptrdiff_t(std::min(n, v.size())), v.end());
  };
  auto all_but_last = [](const std::vector<const Info*>& v, size_t n) {
    return std::vector<const Info*>(v.begin(), v.end() - std::ptrdiff_t(std::min(n, v.size())));
  };
  if (options_.keep_checkpoints_without_metrics) {
    maybe_delete = all_but_last(sorted, keep);
    kept = without_metrics;
    for (const Info* i : last(sorted, keep)) kept.push_back(i);
  } else {
    std::vector<const Info*> all = without_metrics;
    all.insert(all.end(), sorted.begin(), sorted.end());
    maybe_delete = all_but_last(all, keep);
    kept = last(all, keep);
  }
  if (options_.keep_period)
    for (const Info* i : maybe_delete)
      if (i->step % *options_.keep_period == 0) kept.push_back(i);
  std::vector<int64_t> out;
  for (const Info& i : checkpoints_)
    if (std::find(kept.begin(), kept.end(), &i) == kept.end()) out.push_back(i.step);
  return out;
}

std::optional<int64_t> CheckpointManager::best_step() const {
  if (!options_.best_fn) return latest_step();
  std::optional<int64_t> best;
  double best_value = 0;
  for (const Info& i : checkpoints_) {
    if (!i.metrics) continue;
    double v = options_.best_fn(*i.metrics);
    // Ties go to the later step, as the stable ascending sort in steps_to_remove ranks them.
    bool better = !best || (options_.best_mode == BestMode::max ? v >= best_value : v <= best_value);
    if (better) best = i.step, best_value = v;
  }
  return best;
}

bool CheckpointManager::save_items(int64_t step, const Composite& items,
                                   std::optional<Metrics> metrics, bool force) {
  const char* op = "CheckpointManager.save";
  if (options_.read_only) return false;
  if (step < 0) throw ValueError(str("[", op, "] the step must be non-negative, not ", step));
  if (!force && !should_save(step)) return false;
  wait_until_finished();
  for (const Info& i : checkpoints_)
    if (i.step == step)
      throw ValueError(str("[", op, "] step ", step, " already exists in '", directory_,
                           "'; delete_step(", step, ") first or save another step"));
  if (items.empty()) throw ValueError(str("[", op, "] there is nothing to save (no items)"));
  for (size_t i = 0; i < items.size(); ++i) {
    check_item_name(items[i].first, op);
    for (size_t j = 0; j < i; ++j)
      if (items[j].first == items[i].first)
        throw ValueError(str("[", op, "] the item name '", items[i].first, "' appears twice"));
  }

  // Everything the writer needs is captured here; with async saving the array bytes are
  // copied, so the caller may donate or drop its arrays at once.
  struct Job {
    std::string final_dir, tmp_dir, step_metadata;
    std::vector<std::pair<std::string, ItemImage>> images;
    std::vector<std::string> to_delete;
  };
  auto job = std::make_shared<Job>();
  bool async = options_.enable_async_checkpointing;
  for (const auto& [name, item] : items) {
    auto [leaves, def] = tree::flatten(item);
    job->images.emplace_back(name, make_item_image(def, leaves, async, op));
  }
  job->final_dir = join_path(directory_, step_name(step));
  job->tmp_dir = temporary_name(job->final_dir);
  job->step_metadata = step_metadata_json(step, items, metrics);

  checkpoints_.push_back(Info{step, std::move(metrics)});
  std::vector<int64_t> remove = steps_to_remove();
  for (int64_t s : remove) job->to_delete.push_back(join_path(directory_, step_name(s)));
  std::erase_if(checkpoints_, [&](const Info& i) {
    return std::find(remove.begin(), remove.end(), i.step) != remove.end();
  });

  std::string directory = directory_;
  const bool primary = is_primary_process();
  auto write = [job, directory, op, primary] {
    if (!primary) return;  // process 0 writes for all (agree_written tells the others)
    JX_PROFILE_SCOPE("checkpoint",
                     [&](std::string& n, prof::Args& a) { n = op, a.add("path", job->final_dir); });
    try {
      make_directory(job->tmp_dir, op);
      for (const auto& [name, image] : job->images) write_item(join_path(job->tmp_dir, name), image, op);
      write_file(join_path(job->tmp_dir, kStepMetadata),
                 {{job->step_metadata.data(), job->step_metadata.size()}}, op);
      fsync_directory(job->tmp_dir, op);
      rename_path(job->tmp_dir, job->final_dir, op);  // the commit
      fsync_directory(directory, op);
    } catch (...) {
      try {
        remove_tree(job->tmp_dir, op);
      } catch (...) {
      }
      throw;
    }
    job->images.clear();  // free the snapshot before deleting old steps
    for (const std::string& dir : job->to_delete)
      if (path_exists(dir)) delete_checkpoint_dir(dir, op);
  };
  if (!async) {
    std::exception_ptr error;
    try {
      write();
    } catch (...) {
      error = std::current_exception();
    }
    finish_save(error, step);
    return true;
  }
  pending_ = std::make_unique<Pending>();
  pending_->step = step;
  Pending* p = pending_.get();
  p->thread = std::thread([p, write] {
    try {
      write();
    } catch (...) {
      p->error = std::current_exception();
    }
    p->done = true;
  });
  return true;
}

void CheckpointManager::wait_until_finished() {
  if (!pending_) return;
  pending_->thread.join();
  std::exception_ptr error = pending_->error;
  const int64_t step = pending_->step;
  pending_.reset();
  finish_save(error, step);
}

void CheckpointManager::finish_save(std::exception_ptr error, int64_t step) {
  try {
    agree_written(error != nullptr, "CheckpointManager.save", join_path(directory_, step_name(step)));
  } catch (...) {
    error = std::current_exception();
  }
  if (error) {
    load_infos();  // the step was not committed; old steps may or may not be gone
    std::rethrow_exception(error);
  }
}

void CheckpointManager::check_for_errors() {
  if (pending_ && pending_->done) wait_until_finished();
}

bool CheckpointManager::is_saving_in_progress() const { return pending_ && !pending_->done; }

void CheckpointManager::delete_step(int64_t step) {
  const char* op = "CheckpointManager.delete_step";
  if (options_.read_only) return;
  wait_until_finished();
  auto it = std::find_if(checkpoints_.begin(), checkpoints_.end(),
                         [&](const Info& i) { return i.step == step; });
  if (it == checkpoints_.end())
    throw ValueError(str("[", op, "] step ", step, " does not exist; the steps are ",
                         list_str(all_steps())));
  if (is_primary_process()) delete_checkpoint_dir(join_path(directory_, step_name(step)), op);
  checkpoints_.erase(it);
}

std::string CheckpointManager::step_path(std::optional<int64_t> step) {
  const char* op = "CheckpointManager.restore";
  if (!step) step = latest_step();
  if (!step) throw ValueError(str("[", op, "] '", directory_, "' holds no checkpoint"));
  if (std::none_of(checkpoints_.begin(), checkpoints_.end(),
                   [&](const Info& i) { return i.step == *step; }))
    throw ValueError(str("[", op, "] step ", *step, " does not exist in '", directory_,
                         "'; the steps are ", list_str(all_steps())));
  // A step still being written is waited for.
  if (pending_ && pending_->step == *step) wait_until_finished();
  return join_path(directory_, step_name(*step));
}

std::string CheckpointManager::item_path(std::optional<int64_t> step, const std::string& name) {
  const std::string dir = step_path(step);
  const std::string path = join_path(dir, name);
  if (path_exists(path)) return path;
  // A name the step does not hold: say which it does (an unreadable step directory is left to
  // read_item's own error).
  std::vector<std::string> items;
  try {
    items = read_step_metadata(dir, "CheckpointManager.restore").items;
  } catch (const Error&) {
    return path;
  }
  std::string names;
  for (const std::string& item : items) names += str(names.empty() ? "" : ", ", "'", item, "'");
  throw ValueError(str("[CheckpointManager.restore] '", dir, "' has no item '", name,
                       "'; its items are ", names.empty() ? "none" : names));
}

Tree CheckpointManager::restore(std::optional<int64_t> step) {
  return read_item(item_path(step, "default"), "CheckpointManager.restore");
}

Tree CheckpointManager::restore_item(std::optional<int64_t> step, const std::string& name) {
  return read_item(item_path(step, name), "CheckpointManager.restore");
}

std::vector<std::string> CheckpointManager::item_names(int64_t step) {
  return read_step_metadata(step_path(step), "CheckpointManager.item_names").items;
}

}  // namespace jx::ckpt
