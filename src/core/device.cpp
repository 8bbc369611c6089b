// CPU devices and committed arrays (include/jx/device.h).
#include <atomic>
#include <cstdlib>

#include "core/array_impl.h"
#include "jx/device.h"
#include "support/process_group.h"
#include "support/str.h"

namespace jx {
namespace {

std::atomic<int> g_cpu_devices{0};

int env_device_count() {
  const char* v = std::getenv("JX_NUM_CPU_DEVICES");
  if (!v || !*v) return 1;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 4096)
    throw ValueError(str("JX_NUM_CPU_DEVICES='", v, "' is not a device count; give an integer from 1 to 4096"));
  return int(n);
}

std::string device_name(int32_t id) { return str("cpu:", id); }

}  // namespace

std::string Device::str() const { return jx::str(platform, ":", id); }

void set_cpu_device_count(int n) {
  if (n < 1) throw ValueError(str("[set_cpu_device_count] ", n, " devices; give at least 1"));
  if (support::process_count() > 1 && n != local_device_count())
    throw ValueError(str("[set_cpu_device_count] the processes of this run agreed on ", local_device_count(),
                         " device(s) each in distributed::initialize; set the count (or JX_NUM_CPU_DEVICES) "
                         "before initializing"));
  g_cpu_devices = n;
}

int local_device_count() {
  int n = g_cpu_devices.load();
  if (n == 0) {
    int expected = 0;
    g_cpu_devices.compare_exchange_strong(expected, env_device_count());
    n = g_cpu_devices.load();
  }
  return n;
}

int device_count() { return local_device_count() * support::process_count(); }

std::vector<Device> devices() {
  std::vector<Device> d;
  const int local = local_device_count();
  for (int p = 0; p < support::process_count(); ++p)
    for (int i = 0; i < local; ++i) d.push_back(Device{.id = p * local + i, .process_index = p});
  return d;
}

std::vector<Device> local_devices() {
  std::vector<Device> d;
  for (const Device& x : devices())
    if (x.process_index == support::process_index()) d.push_back(x);
  return d;
}

Array device_put(const Array& x, const Device& device) {
  if (!x.valid()) throw ValueError("[device_put] got an empty jx::Array (default-constructed); give it a value first");
  const int local = local_device_count(), first = support::process_index() * local;
  if (device.platform != "cpu" || device.id < first || device.id >= first + local)
    throw ValueError(str("[device_put] ", device.str(), " (process ", device.process_index,
                         ") is not a device of this process; use one of jx::local_devices(): cpu:", first, " to cpu:",
                         first + local - 1));
  if (!x.is_concrete() || detail::impl_of(x).device == device.id) return x;
  Array out = detail::alias_array(x, x.shape(), x.weak_type());
  out.impl()->cpp_value = detail::impl_of(x).cpp_value;
  out.impl()->device = device.id;
  return out;
}

Array device_get(const Array& x) {
  if (!x.valid()) throw ValueError("[device_get] got an empty jx::Array (default-constructed); give it a value first");
  if (!x.is_concrete())
    throw ConcretizationError(str("[device_get] needs a concrete array, not a traced ", type_str(x.dtype(), x.shape()),
                                  ": call it outside jit, grad and vmap"));
  if (detail::impl_of(x).device < 0) return x;
  Array out = detail::alias_array(x, x.shape(), x.weak_type());
  out.impl()->cpp_value = detail::impl_of(x).cpp_value;
  return out;
}

Device Array::device() const {
  if (!valid() || !is_concrete())
    throw ConcretizationError(str("[Array.device] a ", valid() ? "traced" : "default-constructed",
                                  " array has no device; ask a concrete array"));
  const int local = local_device_count();
  const int32_t id = impl_->device >= 0 ? impl_->device : support::process_index() * local;
  return Device{.id = id, .process_index = id / local};
}

bool Array::committed() const { return valid() && impl_->device >= 0; }

namespace detail {

void merge_device(const char* op, int32_t& device, const Array& operand) {
  const int32_t d = impl_of(operand).device;
  if (d < 0 || d == device) return;
  if (device >= 0)
    throw ValueError(str("[", op, "] operands are committed to different devices, ", device_name(device), " and ",
                         device_name(d), "; move one with jx::device_put(x, device), or jx::device_get(x) to "
                         "uncommit it"));
  device = d;
}

int32_t committed_device(const char* op, std::span<const Array> operands) {
  int32_t device = -1;
  for (const Array& a : operands)
    if (a.valid()) merge_device(op, device, a);
  return device;
}

void commit(Array& out, int32_t device) {
  if (!out.valid() || impl_of(out).device == device || !out.is_concrete()) return;
  if (out.impl().use_count() > 1) {
    Array fresh = alias_array(out, out.shape(), out.weak_type());
    fresh.impl()->cpp_value = impl_of(out).cpp_value;
    out = std::move(fresh);
  }
  out.impl()->device = device;
}

}  // namespace detail
}  // namespace jx
