import pytest
from output_example import build_example


@pytest.fixture
def example():
    return build_example()
