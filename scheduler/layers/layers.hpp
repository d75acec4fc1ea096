#pragma once
// The layer classes the registry (registry.cpp) holds, one file each.
#include "scheduler/layers/layer.hpp"

#include <memory>

namespace ipusim::scheduler {

std::unique_ptr<Layer> makeReshapeLayer();             // flatten, reshape
std::unique_ptr<Layer> makeDenseLayer();               // dense
std::unique_ptr<Layer> makeEinsumDenseLayer();         // einsum_dense
std::unique_ptr<Layer> makeEmbeddingLayer();           // embedding
std::unique_ptr<Layer> makeRecurrentLayer();           // simple_rnn, lstm, gru
std::unique_ptr<Layer> makeBidirectionalLayer();       // bidirectional
std::unique_ptr<Layer> makeTimeDistributedLayer();     // Keras's TimeDistributed(Dense), read as the dense
std::unique_ptr<Layer> makeDropoutLayer();             // dropout
std::unique_ptr<Layer> makeMaskingLayer();             // masking
std::unique_ptr<Layer> makeGaussianNoiseLayer();       // gaussian_noise, gaussian_dropout
std::unique_ptr<Layer> makeBatchNormalizationLayer();  // batch_normalization
std::unique_ptr<Layer> makeActivationLayer();          // activation
std::unique_ptr<Layer> makeConv2DLayer();              // conv2d, conv1d
std::unique_ptr<Layer> makeDepthwiseConvLayer();       // depthwise_conv2d, depthwise_conv1d
std::unique_ptr<Layer> makeSeparableConvLayer();       // separable_conv2d, separable_conv1d
std::unique_ptr<Layer> makeConvTransposeLayer();       // conv2d_transpose, conv1d_transpose
std::unique_ptr<Layer> makePoolingLayer();             // max/average pooling, global pooling
std::unique_ptr<Layer> makeMergeLayer();               // add, subtract, multiply, concatenate
std::unique_ptr<Layer> makePaddingLayer();             // zero padding, cropping (1-D, 2-D)
std::unique_ptr<Layer> makeReluLayer();                // relu (ReLU: max_value, negative_slope, threshold)
std::unique_ptr<Layer> makeLeakyReluLayer();           // leaky_relu
std::unique_ptr<Layer> makeEluLayer();                 // elu
std::unique_ptr<Layer> makePReluLayer();               // prelu
std::unique_ptr<Layer> makeSoftmaxLayer();             // softmax (any axis)
std::unique_ptr<Layer> makeRescalingLayer();           // rescaling
std::unique_ptr<Layer> makeNormalizationLayer();       // normalization
std::unique_ptr<Layer> makeLayerNormalizationLayer();  // layer_normalization
std::unique_ptr<Layer> makeGroupNormalizationLayer();  // group_normalization
std::unique_ptr<Layer> makeUpSamplingLayer();          // up_sampling1d, up_sampling2d
std::unique_ptr<Layer> makePermuteLayer();             // permute
std::unique_ptr<Layer> makeMultiHeadAttentionLayer();  // multi_head_attention
std::unique_ptr<Layer> makePositionEmbeddingLayer();   // position_embedding
std::unique_ptr<Layer> makeRecomputationCheckpointLayer();  // recomputation_checkpoint

}  // namespace ipusim::scheduler
