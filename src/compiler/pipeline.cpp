// The pass pipeline, as Halide's Lower.cpp: a fixed, linear list of passes, each logged
// and dumped. Inlining runs once (nothing later creates calls); simplify, fold, CSE, DCE,
// the convolution epilogues, the per-example rewrites, the scan hoisting and the scan
// residual recomputation then repeat until a whole round changes nothing (each can expose
// work for the others: folding makes `x * 1` visible to simplify, simplify leaves dead
// producers, an epilogue leaves the convolution it replaced to DCE). For compiled
// kernels, cheap producers are then duplicated once per reader (pass_duplicate.cpp).
#include "compiler/pipeline.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <unistd.h>

#include "compiler/passes.h"
#include "ops/common.h"
#include "support/profiler.h"

namespace jx::compiler {
namespace {

constexpr int kMaxRounds = 8;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

bool verify_enabled() {
#ifndef NDEBUG
  return true;
#else
  return env_flag("JX_VERIFY_PASSES");
#endif
}

// File names keep letters, digits, '-', '_' and '.'; anything else becomes '_'.
std::string file_safe(const std::string& s) {
  std::string r = s.empty() ? "jit" : s;
  for (char& c : r)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  return r;
}

// Writes to a temporary name in the same directory, then renames: a reader (or a second
// process dumping the same program) never sees half a file.
void write_atomically(const std::filesystem::path& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  std::filesystem::path tmp = path;
  tmp += str(".tmp.", ::getpid(), ".", counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) {
      std::cerr << "[jx] JX_DUMP_DIR: cannot write " << tmp << "\n";
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::cerr << "[jx] JX_DUMP_DIR: cannot rename " << tmp << " to " << path << ": " << ec.message() << "\n";
    std::filesystem::remove(tmp, ec);
  }
}

// The same sub-jaxpr (by identity) shared by several equations is optimized once, so
// equal params stay equal and CSE can still merge those equations.
using SubCache = std::map<const ir::Jaxpr*, std::shared_ptr<const ir::Jaxpr>>;

class Run {
 public:
  Run(std::string name, bool dump, bool for_kernels)
      : name_(file_safe(name)), log_(env_flag("JX_LOG_PASSES")), for_kernels_(for_kernels) {
    const char* dir = std::getenv("JX_DUMP_DIR");
    if (dump && dir && *dir) dump_dir_ = dir;
  }

  ir::Jaxpr run(const ir::Jaxpr& input) {
    dump("input", input);
    ir::Jaxpr j = stage(default_pipeline()[0], input);
    j = optimize_sub_jaxprs(j);
    for (int round = 0; round < kMaxRounds; ++round) {
      ir::Jaxpr before = j;
      for (size_t i = 1; i < default_pipeline().size(); ++i) j = stage(default_pipeline()[i], j);
      if (passes::same_jaxpr(before, j)) break;
    }
    // Once, outside the loop: CSE would merge the copies again.
    if (for_kernels_) j = stage({"duplicate", duplicate_cheap_producers}, j);
    return j;
  }

 private:
  ir::Jaxpr stage(const Pass& pass, const ir::Jaxpr& in) {
    JX_PROFILE_SCOPE("jit", [&](std::string& n, prof::Args& a) {
      n = str("pass ", pass.name), a.add("program", name_).add("eqns", in.eqns.size()); });
    auto t0 = std::chrono::steady_clock::now();
    ir::Jaxpr out = pass.run(in);
    auto t1 = std::chrono::steady_clock::now();
    if (log_) {
      double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      static std::mutex mu;  // one line at a time when several threads compile
      std::lock_guard<std::mutex> lock(mu);
      std::fprintf(stderr, "[jx pass] %s %-8s %zu -> %zu eqns, %.3f ms\n", name_.c_str(), pass.name,
                   in.eqns.size(), out.eqns.size(), ms);
    }
    dump(pass.name, out);
    if (verify_enabled()) check(pass, in, out);
    return out;
  }

  void check(const Pass& pass, const ir::Jaxpr& in, const ir::Jaxpr& out) {
    try {
      ir::verify(out);
    } catch (const std::exception& e) {
      throw InternalError(str("[optimize] pass ", pass.name, " produced an invalid jaxpr for ", name_,
                              ": ", e.what(), "\n", ir::to_string(out)));
    }
    if (!(in.in_avals() == out.in_avals()) || !(in.out_avals() == out.out_avals()))
      throw InternalError(str("[optimize] pass ", pass.name, " changed the signature of ", name_,
                              " from ", ops::avals_str(in.in_avals()), " -> ",
                              ops::avals_str(in.out_avals()), " to ", ops::avals_str(out.in_avals()),
                              " -> ", ops::avals_str(out.out_avals())));
  }

  void dump(const char* stage_name, const ir::Jaxpr& j) {
    if (dump_dir_.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dump_dir_, ec);
    char nn[16];
    std::snprintf(nn, sizeof nn, "%02d", stage_++);
    write_atomically(std::filesystem::path(dump_dir_) / str(name_, ".", nn, ".", stage_name, ".jaxpr.txt"),
                     ir::to_string(j) + "\n");
  }

  // Cond branches, loop and scan bodies are optimized on their own (their signature is
  // fixed by the equation that holds them, and they stay closed over nothing); they are
  // not dumped.
  ir::Jaxpr optimize_sub_jaxprs(const ir::Jaxpr& j) {
    ir::Jaxpr out = j;
    for (ir::Eqn& e : out.eqns) {
      if (e.prim != ops::Prim::Cond && e.prim != ops::Prim::While && e.prim != ops::Prim::Scan) continue;
      for (const auto& [key, value] : j.eqns[size_t(&e - out.eqns.data())].params.items()) {
        auto* obj = std::get_if<std::shared_ptr<const ops::ParamObject>>(&value);
        auto* js = obj ? dynamic_cast<const ir::JaxprsParam*>(obj->get()) : nullptr;
        if (!js) continue;
        std::vector<std::shared_ptr<const ir::Jaxpr>> optimized;
        for (const auto& sub : js->jaxprs) {
          auto& slot = sub_cache_[sub.get()];
          if (!slot) {
            KeepClosed closed;
            slot = std::make_shared<const ir::Jaxpr>(Run(name_ + "." + ops::name(e.prim), false, for_kernels_).run(*sub));
          }
          optimized.push_back(slot);
        }
        e.params.set(key, std::shared_ptr<const ops::ParamObject>(
                              std::make_shared<ir::JaxprsParam>(std::move(optimized))));
      }
    }
    return out;
  }

  std::string name_;
  bool log_;
  bool for_kernels_;
  std::string dump_dir_;
  int stage_ = 0;
  SubCache sub_cache_;
};

}  // namespace

const std::vector<Pass>& default_pipeline() {
  static const std::vector<Pass> passes = {
      {"inline", inline_calls},
      {"simplify", simplify},
      {"fold", fold_constants},
      {"cse", eliminate_common_subexpressions},
      {"dce", eliminate_dead_code},
      {"epilogue", fuse_conv_epilogues},
      {"per_example", rewrite_per_example_products},
      {"scan_hoist", hoist_from_scans},
      {"scan_remat", recompute_scan_residuals},
  };
  return passes;
}

ir::Jaxpr optimize(const ir::Jaxpr& j, const std::string& name, bool for_kernels) {
  return Run(name, true, for_kernels).run(j);
}

}  // namespace jx::compiler
