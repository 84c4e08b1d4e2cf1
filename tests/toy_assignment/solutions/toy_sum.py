"""Toy sums: the reference."""


def add(a, b):
    return a + b


def total(numbers):
    result = 0
    for number in numbers:
        result = add(result, number)
    return result
