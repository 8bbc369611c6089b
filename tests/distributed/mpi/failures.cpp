// A multi-process run in which one process fails, for failures.sh (run by ctest):
//   failures kill   process 1 kills itself (SIGKILL) after 3 steps; process 0 keeps going
//   failures stall  process 1 stops answering (sleeps 60 s) before its first collective
// Either way process 0 must not hang: the launcher ends the job when a process dies, and a
// collective that waits longer than JX_DISTRIBUTED_TIMEOUT throws DistributedError.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "jx/jx.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "kill" && mode != "stall") {
    std::fprintf(stderr, "usage: mpirun -np 2 %s kill|stall\n", argv[0]);
    return 2;
  }
  jx::distributed::initialize();
  auto step = jx::pmap([](const jx::Array& x) { return jx::lax::psum(x, "i"); }, {.axis_name = "i"});
  jx::Array x = jx::numpy::ones({jx::local_device_count(), 1000});
  try {
    for (int i = 0;; ++i) {
      if (jx::process_index() == 1 && mode == "kill" && i == 3) raise(SIGKILL);
      if (jx::process_index() == 1 && mode == "stall") sleep(60);
      x = step(x) / 2.0f;
      if (i % 100 == 0) std::printf("process %d: step %d\n", jx::process_index(), i), std::fflush(stdout);
    }
  } catch (const jx::DistributedError& e) {
    std::fprintf(stderr, "process %d: DistributedError: %s\n", jx::process_index(), e.what());
    return 3;
  }
}
