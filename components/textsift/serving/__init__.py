"""A privacy setting shipped as a model: the MLflow pyfunc privatizer (``textsift-privatizer``).

A data team ships a setting, not a classifier: ``outsider@<setting>`` logs the setting as an MLflow pyfunc model
whose input is a column of texts (and optional ids) and whose output is the privatized texts (and, for a DP
mechanism, the ε each document spent), packed with the validated params and the models and indexes the setting needs
(:mod:`textsift.serving.resources`). The secret key is never inside the model: it is read from
``TEXTSIFT_SECRET_KEY`` when the model is loaded, and served draws derive from it for serving only, with a fresh
name per record (:mod:`textsift.releases`): no request reproduces what was published. Corpus-wide mechanisms
(DataSifterText, METHODS.md §1) are not served per request, and metric-DP only over a public vocabulary: an index
built from the corpus holds its own words, personal data included (a registered model is shared; such an index is a
local DVC output).
"""
