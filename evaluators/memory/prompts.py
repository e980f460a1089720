"""Judge prompts.

The binary prompts are the LongMemEval benchmark's official answer-check prompts, word for
word, from ``get_anscheck_prompt`` in xiaowu0162/LongMemEval
``src/evaluation/evaluate_qa.py`` (MIT licence; Wu et al., ICLR 2025).  The official
judge reads the reply as correct when ``'yes' in reply.lower()`` (gpt-4o-2024-08-06,
temperature 0, ``max_tokens=10``).

The continuous prompt is EvalBoard's own: a graded score in steps of 0.2 with a short
reasoning, returned as JSON.
"""

from __future__ import annotations

#: Official LongMemEval prompt for single-session-user, single-session-assistant and
#: multi-session questions (our ``default_binary`` mode).  Fields: question, answer, response.
LME_DEFAULT = (
    "I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
    "response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct "
    "answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If "
    "the response only contains a subset of the information required by the answer, answer no. \n\n"
    "Question: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\n"
    "Is the model response correct? Answer yes or no only."
)

#: Official LongMemEval prompt for temporal-reasoning questions (off-by-one day counts accepted).
LME_TEMPORAL = (
    "I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
    "response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct "
    "answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If "
    "the response only contains a subset of the information required by the answer, answer no. In addition, "
    "do not penalize off-by-one errors for the number of days. If the question asks for the number of "
    "days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days when the answer "
    "is 18), the model's response is still correct. \n\n"
    "Question: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\n"
    "Is the model response correct? Answer yes or no only."
)

#: Official LongMemEval prompt for knowledge-update questions (the updated answer decides).
LME_KNOWLEDGE_UPDATE = (
    "I will give you a question, a correct answer, and a response from a model. Please answer yes if the "
    "response contains the correct answer. Otherwise, answer no. If the response contains some previous "
    "information along with an updated answer, the response should be considered as correct as long as the "
    "updated answer is the required answer.\n\n"
    "Question: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\n"
    "Is the model response correct? Answer yes or no only."
)

#: Official LongMemEval prompt for single-session-preference questions (the answer is a rubric).
LME_PREFERENCE = (
    "I will give you a question, a rubric for desired personalized response, and a response from a model. "
    "Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model does "
    "not need to reflect all the points in the rubric. The response is correct as long as it recalls and "
    "utilizes the user's personal information correctly.\n\n"
    "Question: {question}\n\nRubric: {answer}\n\nModel Response: {response}\n\n"
    "Is the model response correct? Answer yes or no only."
)

#: Official LongMemEval prompt for abstention (``_abs``) questions; the answer is an explanation.
LME_ABSTENTION = (
    "I will give you an unanswerable question, an explanation, and a response from a model. Please answer yes "
    "if the model correctly identifies the question as unanswerable. The model could say that the information "
    "is incomplete, or some other information is given but the asked information is not.\n\n"
    "Question: {question}\n\nExplanation: {answer}\n\nModel Response: {response}\n\n"
    "Does the model correctly identify the question as unanswerable? Answer yes or no only."
)

#: EvalBoard's graded prompt (``continuous`` mode).
CONTINUOUS = (
    "You grade an answer given by a memory-augmented assistant against the correct answer. The question and "
    "answers may be in English or Chinese.\n\n"
    "Question: {question}\n\nCorrect Answer: {answer}\n\nModel Response: {response}\n\n"
    "Give a score from 0.0 to 1.0 in steps of 0.2: 1.0 when the response states the correct answer "
    "(different wording, extra detail or an equivalent date format are fine), 0.6-0.8 when it is mostly right "
    "with a minor error or omission, 0.2-0.4 when only a small part is right, 0.0 when it is wrong, "
    "contradicts the correct answer or does not answer.\n"
    'Reply with one JSON object only: {{"score": <0.0|0.2|0.4|0.6|0.8|1.0>, "reasoning": "<one sentence>"}}'
)

#: Binary mode name -> prompt template.
BINARY_PROMPTS: dict[str, str] = {
    "default_binary": LME_DEFAULT,
    "temporal_reasoning": LME_TEMPORAL,
    "knowledge_update": LME_KNOWLEDGE_UPDATE,
    "preference": LME_PREFERENCE,
    "abstention": LME_ABSTENTION,
}
