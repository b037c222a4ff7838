/// \file
/// Text templates of generated projects (`tenet emit --train`, `--target
/// torch`): @KEY@ marks filled in, and identifiers made from file names.
#pragma once

#include <map>
#include <string>

namespace tenet {

/// `text` with every @KEY@ replaced by values[KEY] (values are not scanned
/// again for marks).
std::string substitute_marks(std::string text, const std::map<std::string, std::string>& values);

/// The stem of `path` ("models/mnist-cnn.tn" -> "mnist_cnn") as an
/// identifier: other characters become '_', and `prefix` comes first when
/// the stem is empty or starts with a digit.
std::string identifier_from_stem(const std::string& path, const std::string& prefix);

}  // namespace tenet
