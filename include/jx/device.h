// CPU devices and where arrays live (jax.devices, jax.device_put, jax.device_get).
//
// A process has N CPU devices (XLA's host-platform device count): 1 by default, or
// JX_NUM_CPU_DEVICES, or set_cpu_device_count(N) before the first use. They share the
// process' memory; pmap runs one replica per device, each on a thread with its share of
// the cores. In a multi-process run (jx::distributed::initialize, include/jx/parallel.h)
// devices() lists every process' devices, process by process (id = process_index *
// local_device_count() + i), and local_devices() this process' own.
//
// An array is committed to a device by device_put, and the results of operations on it
// (eager or jitted) are committed to the same device, as in JAX; an operation whose operands
// are committed to two different devices throws ValueError. Other arrays are uncommitted
// and report the default device, local_devices()[0]. device_get returns an uncommitted
// array. Inside pmap replica i computes on device i; pmap's stacked results are uncommitted
// (JAX returns them sharded over the devices).
#pragma once
#include <string>
#include <vector>

namespace jx {

class Array;

struct Device {
  int id = 0;
  int process_index = 0;
  std::string platform = "cpu";
  std::string str() const;  // "cpu:0"
  friend bool operator==(const Device&, const Device&) = default;
};
std::vector<Device> devices();
std::vector<Device> local_devices();
int device_count();
int local_device_count();
// Throws ValueError for n < 1, or once distributed::initialize() has joined other
// processes with another count.
void set_cpu_device_count(int n);

// x committed to `device`, one of local_devices() (the data is shared: CPU devices share
// memory). Under a transformation it returns x unchanged.
Array device_put(const Array& x, const Device& device);
// x uncommitted (a host array). Throws ConcretizationError for a traced x.
Array device_get(const Array& x);

}  // namespace jx
