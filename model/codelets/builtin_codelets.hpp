#pragma once
// One registration function per codelet family; CodeletRegistry::instance()
// calls them all. Internal to model/codelets.
#include "model/codelets/codelet.hpp"

namespace ipusim::model {

void addElementwiseBinaryCodelets(CodeletRegistry& registry);  // Add, Sub, Mul, Div, Maximum, Minimum
void addElementwiseUnaryCodelets(CodeletRegistry& registry);   // Relu, Exp, Log, Neg, Square
void addExtremumCodelets(CodeletRegistry& registry);           // MaximumGrad, MinimumGrad
void addScaledAddCodelet(CodeletRegistry& registry);             // ScaledAdd, ScaledAddSupervisor, Scale
void addAddBiasCodelet(CodeletRegistry& registry);
void addIdMaskCodelet(CodeletRegistry& registry);
void addReduceCodelets(CodeletRegistry& registry);             // ReduceSum, ReduceMax
void addMatMulPartialCodelet(CodeletRegistry& registry);
void addDataMovementCodelets(CodeletRegistry& registry);       // Copy, Cast, Fill
void addSoftmaxCrossEntropyCodelets(CodeletRegistry& registry);  // SoftmaxCrossEntropy(Grad)
void addNonLinearityGradCodelets(CodeletRegistry& registry);     // ReluGrad, SigmoidGrad, TanhGrad, GeluGrad
void addDropoutCodelets(CodeletRegistry& registry);              // Dropout, Increment
void addGaussianNoiseCodelets(CodeletRegistry& registry);        // GaussianNoise, GaussianNoiseScale
void addOptimizerUpdateCodelets(CodeletRegistry& registry);      // MomentumUpdate, AdamUpdate, RmspropUpdate*, ...
void addLearningRateCodelets(CodeletRegistry& registry);         // LearningRate, PiecewiseConstantLearningRate, NadamMomentumProduct
void addGradientClippingCodelets(CodeletRegistry& registry);     // ReduceSquareAdd, ClipByNorm, ClipByValue
void addRegularizerCodelets(CodeletRegistry& registry);          // ReducePenalty, RegularizerGrad
void addAccuracyCodelet(CodeletRegistry& registry);
void addTargetLossCodelets(CodeletRegistry& registry);  // SoftmaxCrossEntropyDense, SigmoidCrossEntropy, SquaredError, ...
void addConvPartialCodelets(CodeletRegistry& registry);          // ConvPartialnx1, ConvPartialHorizontalMac, ConvPartialVerticalMac, ConvWeightUpdatePartial, ConvWeightUpdateHorizontalMac
void addPoolingCodelets(CodeletRegistry& registry);              // MaxPool, AvgPool and their gradients
void addBatchNormCodelets(CodeletRegistry& registry);            // BatchNormStatistics, BatchNormalise, BatchNormInputGrad
void addLayerNormCodelets(CodeletRegistry& registry);            // LayerNormalise, LayerNormInputGrad
void addMultiSliceCodelets(CodeletRegistry& registry);           // MultiSlice, MultiUpdateAdd (the embedding)
void addActivationCodelets(CodeletRegistry& registry);           // ClippedRelu, LeakyRelu, Elu, ... and their gradients
void addSoftmaxCodelets(CodeletRegistry& registry);              // Softmax, SoftmaxGrad (over any axis)
void addColumnBroadcastCodelets(CodeletRegistry& registry);      // PRelu, PReluGrad, Normalize, ScaleShift

}  // namespace ipusim::model
