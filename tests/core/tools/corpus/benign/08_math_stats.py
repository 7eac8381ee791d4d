# Mean, standard deviation and percentiles of order prices.
prices = [o["price"] for o in get_orders().data["orders"]]
n = len(prices)
mean = sum(prices) / n if n else 0.0
variance = sum((p - mean) ** 2 for p in prices) / n if n else 0.0
std = math.sqrt(variance)
ordered = sorted(prices)


def percentile(values, q):
    if not values:
        return None
    k = (len(values) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


emit_result({"mean": round(mean, 2), "std": round(std, 2), "p90": percentile(ordered, 0.9)})
