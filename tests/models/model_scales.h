/// \file
/// The input scales the models suite runs models/mlp.tn, models/mnist_cnn.tn
/// and models/embedding_bag.tn at: the half-width of each float input's uniform range, about
/// 1/sqrt(fan-in) for weights and biases (PyTorch's default initialisation),
/// so that activations neither vanish nor saturate. Inputs not listed keep
/// [-1, 1).
#pragma once

#include <map>
#include <string>

namespace tenet::testing {

inline const std::map<std::string, double> kMlpScales = {
    {"image", 1.0}, {"fc1_w", 0.036}, {"fc1_b", 0.036}, {"fc2_w", 0.0625}, {"fc2_b", 0.0625}};

inline const std::map<std::string, double> kMnistCnnScales = {
    {"image", 1.0},    {"drop1", 1.0},     {"drop2", 1.0},     {"conv1_w", 0.33},
    {"conv1_b", 0.33}, {"conv2_w", 0.059}, {"conv2_b", 0.059}, {"fc1_w", 0.0104},
    {"fc1_b", 0.0104}, {"fc2_w", 0.088},   {"fc2_b", 0.088}};

inline const std::map<std::string, double> kEmbeddingBagScales = {
    {"image", 1.0}, {"E", 0.05}, {"bag_b", 0.05}, {"out_w", 0.072}, {"out_b", 0.125}};

}  // namespace tenet::testing
