"""TfIdfVectorizer over integer n-grams.

  python3 tfidf_models.py OUT.onnx

  x [3, 20] int64 (tokens 0..3) -> TF, n 1..3, skips up to 2       -> tf
                                -> TFIDF, bigrams only, skips up
                                   to 3, weighted                  -> tfidf
  x32 [17] int32                -> IDF, n 1..2, no skips           -> idf
                                -> IDF, n 2..3, weighted           -> idf_w

One pool for all: unigrams [0], [2]; bigrams [1 3], [0 0], [3 1];
trigram [2 2 1]; its output columns permuted.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

pool = dict(pool_int64s=[0, 2, 1, 3, 0, 0, 3, 1, 2, 2, 1],
            ngram_counts=[0, 2, 8], ngram_indexes=[5, 1, 0, 3, 2, 4])
weights = [0.5, 1.5, -2.0, 0.25, 3.0, 1.0]
nodes = [
    helper.make_node("TfIdfVectorizer", ["x"], ["tf"], mode="TF",
                     min_gram_length=1, max_gram_length=3, max_skip_count=2,
                     **pool),
    helper.make_node("TfIdfVectorizer", ["x"], ["tfidf"], mode="TFIDF",
                     min_gram_length=2, max_gram_length=2, max_skip_count=3,
                     weights=weights, **pool),
    helper.make_node("TfIdfVectorizer", ["x32"], ["idf"], mode="IDF",
                     min_gram_length=1, max_gram_length=2, max_skip_count=0,
                     **pool),
    helper.make_node("TfIdfVectorizer", ["x32"], ["idf_w"], mode="IDF",
                     min_gram_length=2, max_gram_length=3, max_skip_count=1,
                     weights=weights, **pool),
]
F = TensorProto.FLOAT
graph = helper.make_graph(
    nodes, "tfidf",
    [helper.make_tensor_value_info("x", TensorProto.INT64, [3, 20]),
     helper.make_tensor_value_info("x32", TensorProto.INT32, [17])],
    [helper.make_tensor_value_info("tf", F, [3, 6]),
     helper.make_tensor_value_info("tfidf", F, [3, 6]),
     helper.make_tensor_value_info("idf", F, [6]),
     helper.make_tensor_value_info("idf_w", F, [6])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
model.ir_version = 4
onnx.checker.check_model(model, full_check=True)
onnx.save(model, sys.argv[1])
