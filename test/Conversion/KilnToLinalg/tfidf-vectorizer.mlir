// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// TfIdfVectorizer: the pool folded into per-column lists (each column's
// first entry; each entry's length and tokens padded to max_gram_length),
// one generic over the output whose body loops over the column's
// entries, the skip distances (one for a unigram) and the starts, and
// compares max_gram_length tokens. Pool: unigrams [5], [7]; bigrams
// [5 7] (column 0), [7 7] (column 2); columns 3, 1, 0, 2.

// CHECK-LABEL: func.func @tf
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x9xi64>
// CHECK-DAG:     %[[START:.+]] = arith.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK-DAG:     %[[LEN:.+]] = arith.constant dense<[2, 1, 2, 1]> : tensor<4xi64>
// CHECK-DAG:     %[[TOK:.+]] = arith.constant dense<{{\[\[}}5, 7], [7, 0], [7, 7], [5, 0]]> : tensor<4x2xi64>
// CHECK:         linalg.generic
// CHECK:           tensor.extract %[[START]]
// CHECK:           scf.for
// CHECK:             tensor.extract %[[LEN]]
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK-COUNT-2:         tensor.extract %[[X]]
// CHECK:           arith.sitofp
// CHECK-NOT:       arith.mulf
// CHECK:           linalg.yield
func.func @tf(%x: tensor<2x9xi64>) -> tensor<2x4xf32> {
  %0 = kiln.tf_idf_vectorizer(%x) {max_gram_length = 2 : i64, max_skip_count = 1 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 3, 1, 0, 2>, pool_int64s = array<i64: 5, 7, 5, 7, 7, 7>} : (tensor<2x9xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// TFIDF with weights: weights[g] belongs to n-gram g, so column
// ngram_indexes[g] (columns 3, 1, 0, 2 take 0.5, 1.5, 2, 4: the column
// order is 2, 1.5, 4, 0.5); bigrams only, so the unigrams have no entries.

// CHECK-LABEL: func.func @tfidf
// CHECK-DAG:     arith.constant dense<[0, 1, 1, 2, 2]> : tensor<5xi64>
// CHECK-DAG:     %[[W:.+]] = arith.constant dense<[2.000000e+00, 1.500000e+00, 4.000000e+00, 5.000000e-01]> : tensor<4xf32>
// CHECK:         linalg.generic
// CHECK:           arith.sitofp
// CHECK:           tensor.extract %[[W]]
// CHECK:           arith.mulf
func.func @tfidf(%x: tensor<9xi32>) -> tensor<4xf32> {
  %0 = kiln.tf_idf_vectorizer(%x) {max_gram_length = 2 : i64, max_skip_count = 0 : i64, min_gram_length = 2 : i64, mode = "TFIDF", ngram_counts = array<i64: 0, 2>, ngram_indexes = array<i64: 3, 1, 0, 2>, pool_int64s = array<i64: 5, 7, 5, 7, 7, 7>, weights = array<f32: 0.5, 1.5, 2.0, 4.0>} : (tensor<9xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
