// Telling tensor files apart: which reader a file given as "all tensors in one file" goes to.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace iotx::io {

enum class TensorFileFormat {
  kNpy,          // one unnamed tensor (\x93NUMPY)
  kSafetensors,  // u64 header length, JSON header, data
  kPickle,       // a pickle of {name: numpy array}
};

// Decides by structure, then by name, with the pickle reader as the fallback:
// 1. the .npy magic: kNpy;
// 2. the safetensors structure: the little-endian u64 at the start is a header length that
//    fits in the file, and the header it spans is '{' ... '}' within JSON whitespace (the
//    writers pad with spaces): kSafetensors. Every file ParseSafetensors accepts passes. This comes before the pickle magic, because
//    a header length of 128, 384, 640, ... (0x80 in its low byte) starts the file with the
//    pickle PROTO opcode: a 65-byte tensor name is enough, about 1 file in 32;
// 3. the pickle PROTO opcode 0x80 (protocols 2-5): kPickle;
// 4. a ".safetensors" name: kSafetensors (its reader then says what is wrong);
// 5. anything else: kPickle, whose reader names what it finds (a forbidden global, an old
//    protocol) instead of a safetensors header length made of pickle opcodes.
// A pickle cannot pass (2): its first 8 bytes read as a length of at least 0x950480 (protocol
// 4+: PROTO, FRAME) whose 9th byte is the high byte of a frame length, 0, or (protocols 2, 3)
// beyond any file.
TensorFileFormat DetectTensorFileFormat(std::span<const std::byte> bytes,
                                        const std::filesystem::path& path);

}  // namespace iotx::io
