# Email every user with an overdue order.
overdue = [o for o in get_orders().data["orders"] if o.get("overdue")]
sent = 0
for order in overdue:
    user = get_user(user_id=order["user_id"]).data
    address = user.get("email")
    if not address:
        continue
    body = "Hello {}, your order {} is overdue.".format(user.get("name", "there"), order["order_id"])
    send_email(to=address, subject="Overdue order", body=body)
    sent += 1
emit_result({"emails_sent": sent})
