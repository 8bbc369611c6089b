// jx::io: reading and writing weights and arrays in other tools' formats, in one namespace.
//   safetensors   jx::io::load_safetensors / save_safetensors (memory-mapped on read)
//   NumPy         jx::io::load / save (.npy), load_npz / savez / savez_compressed (.npz)
//   PyTorch       jx::io::load_torch_state_dict / save_torch_state_dict, and the mapping
//                 to and from Flax-shaped variables (torch_to_flax / flax_to_torch)
// The same functions are in jx::numpy (as jnp.load / jnp.save are); docs/data.md,
// docs/pytorch_weights.md.
#pragma once
#include "jx/io/torch.h"
#include "jx/numpy/io.h"
#include "jx/numpy/safetensors.h"

namespace jx::io {
using numpy::load;
using numpy::load_npz;
using numpy::load_safetensors;
using numpy::NpzFile;
using numpy::save;
using numpy::save_safetensors;
using numpy::savez;
using numpy::savez_compressed;
}  // namespace jx::io
