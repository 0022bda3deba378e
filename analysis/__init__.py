"""Analysis suite for culturally specific long-form QA results (CaLMQA, NativQA)."""
